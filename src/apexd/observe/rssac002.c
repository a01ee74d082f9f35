/* SPDX-License-Identifier: BSD-3-Clause */
/* RSSAC002's measurements in apexctl stats (apex_stats_render_rssac002(),
 * declared in stats.h). */
#include "observe/stats.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "ctl/json.h"

/* RSSAC002's names of the traffic-volume and traffic-sizes measurements. */
static const char *const transport_names[APEX_STATS_TRANSPORTS] = { "udp", "tcp" };
static const char *const family_names[APEX_STATS_FAMILIES] = { "ipv4", "ipv6" };

/* One size histogram, its non-zero buckets: JSON members or " a-b=n" in text. */
static void render_sizes(apex_ctl_buf_t *b, apex_ctl_format_t format, const uint64_t *buckets,
			 unsigned count)
{
	bool first = true;
	char name[16];

	for (unsigned i = 0; i < count; i++) {
		if (buckets[i] == 0)
			continue;
		apex_stats_size_name(i, count, name, sizeof(name));
		if (format == APEX_CTL_FORMAT_JSON)
			apex_ctl_buf_printf(b, "%s\"%s\":%" PRIu64, first ? "" : ",", name,
					    buckets[i]);
		else
			apex_ctl_buf_printf(b, " %s=%" PRIu64, name, buckets[i]);
		first = false;
	}
}

void apex_stats_render_rssac002(apex_ctl_buf_t *b, apex_ctl_format_t format,
				const apex_stats_totals_t *t, const apex_stats_zone_names_t *zones)
{
	bool json = format == APEX_CTL_FORMAT_JSON;
	const char *sep = "";

	apex_ctl_buf_puts(b, json ? ",\"rssac002\":{\"traffic-volume\":{" : "traffic-volume:\n");
	for (unsigned pass = 0; pass < 2; pass++) {
		for (unsigned x = 0; x < APEX_STATS_TRANSPORTS; x++) {
			for (unsigned f = 0; f < APEX_STATS_FAMILIES; f++) {
				apex_ctl_buf_printf(b,
						    json ? "%s\"dns-%s-%s-%s\":%" PRIu64
							 : "%s  dns-%s-%s-%s: %" PRIu64 "\n",
						    sep, transport_names[x],
						    pass == 0 ? "queries-received"
							      : "responses-sent",
						    family_names[f],
						    pass == 0 ? t->received[x][f] : t->sent[x][f]);
				sep = json ? "," : "";
			}
		}
	}
	apex_ctl_buf_puts(b, json ? "},\"traffic-sizes\":{" : "traffic-sizes:\n");
	for (unsigned x = 0; x < APEX_STATS_TRANSPORTS; x++) {
		if (json)
			apex_ctl_buf_printf(b, "%s\"%s-request-sizes\":{", x == 0 ? "" : ",",
					    transport_names[x]);
		else
			apex_ctl_buf_printf(b, "  %s-request-sizes:", transport_names[x]);
		render_sizes(b, format, t->request_size[x], APEX_STATS_REQUEST_SIZES);
		apex_ctl_buf_printf(b,
				    json ? "},\"%s-response-sizes\":{" : "\n  %s-response-sizes:",
				    transport_names[x]);
		render_sizes(b, format, t->response_size[x], APEX_STATS_RESPONSE_SIZES);
		apex_ctl_buf_puts(b, json ? "}" : "\n");
	}
	apex_ctl_buf_puts(b, json ? "},\"rcode-volume\":{" : "rcode-volume:");
	sep = "";
	for (unsigned r = 0; r + 1 < APEX_STATS_RCODES; r++) {
		if (t->rcode[r] == 0)
			continue;
		apex_ctl_buf_printf(b, json ? "%s\"%u\":%" PRIu64 : "%s %u=%" PRIu64, sep, r,
				    t->rcode[r]);
		sep = json ? "," : "";
	}
	apex_ctl_buf_puts(b, json ? "}},\"zones\":{" : "\nqueries by zone:");
	sep = "";
	for (unsigned z = 0; zones != NULL && z < zones->count; z++) {
		if (zones->names[z] == NULL)
			continue;
		if (json) {
			apex_ctl_buf_puts(b, sep);
			apex_ctl_json_string(b, zones->names[z]);
			apex_ctl_buf_printf(b, ":%" PRIu64, t->zone_queries[z]);
		} else {
			apex_ctl_buf_printf(b, " %s=%" PRIu64, zones->names[z], t->zone_queries[z]);
		}
		sep = ",";
	}
	apex_ctl_buf_puts(b, json ? "}" : "\n");
}
