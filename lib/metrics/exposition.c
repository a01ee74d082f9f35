/* SPDX-License-Identifier: BSD-3-Clause */
/* The Prometheus text exposition format. */
#include "metrics/exposition.h"

#include <inttypes.h>
#include <string.h>

void apex_metrics_family(apex_ctl_buf_t *out, const char *name, const char *type, const char *help)
{
	apex_ctl_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void apex_metrics_sample_start(apex_metrics_sample_t *s, apex_ctl_buf_t *out, const char *name)
{
	s->out = out;
	s->labels = false;
	apex_ctl_buf_puts(out, name);
}

void apex_metrics_label(apex_metrics_sample_t *s, const char *key, const char *value)
{
	const char *run = value;

	apex_ctl_buf_printf(s->out, "%s%s=\"", s->labels ? "," : "{", key);
	s->labels = true;
	for (const char *c = value; *c != '\0'; c++) {
		const char *escape = *c == '\\'   ? "\\\\"
				     : *c == '"'  ? "\\\""
				     : *c == '\n' ? "\\n"
						  : NULL;
		if (escape == NULL)
			continue;
		apex_ctl_buf_append(s->out, run, (size_t)(c - run));
		apex_ctl_buf_puts(s->out, escape);
		run = c + 1;
	}
	apex_ctl_buf_puts(s->out, run);
	apex_ctl_buf_puts(s->out, "\"");
}

void apex_metrics_sample_end(apex_metrics_sample_t *s, uint64_t value)
{
	apex_ctl_buf_printf(s->out, "%s %" PRIu64 "\n", s->labels ? "}" : "", value);
}

void apex_metrics_sample_end_real(apex_metrics_sample_t *s, double value)
{
	apex_ctl_buf_printf(s->out, "%s %.9g\n", s->labels ? "}" : "", value);
}

void apex_metrics_sample(apex_ctl_buf_t *out, const char *name, const char *key, const char *value,
			 uint64_t number)
{
	apex_metrics_sample_t s;

	apex_metrics_sample_start(&s, out, name);
	if (key != NULL)
		apex_metrics_label(&s, key, value);
	apex_metrics_sample_end(&s, number);
}
