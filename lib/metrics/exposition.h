/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Prometheus text exposition format (version 0.0.4), written into a
 * control buffer: each family's HELP and TYPE lines, then its samples,
 * each "name{label="value",...} value".  Label values are escaped as the
 * format says (backslash, double quote, newline), so that any zone name
 * may be a label value.
 */
#ifndef APEX_METRICS_EXPOSITION_H
#define APEX_METRICS_EXPOSITION_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/buf.h"

/* The Content-Type of the format. */
#define APEX_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* A sample being written: its name and labels so far. */
typedef struct apex_metrics_sample {
	apex_ctl_buf_t *out;
	bool labels; /* a label was written: '{' is open */
} apex_metrics_sample_t;

/* "# HELP name help" and "# TYPE name type" (counter, gauge, histogram). */
void apex_metrics_family(apex_ctl_buf_t *out, const char *name, const char *type, const char *help);

/* Start a sample of the metric name (a family's name, or with a
 * histogram's _bucket, _sum or _count). */
void apex_metrics_sample_start(apex_metrics_sample_t *s, apex_ctl_buf_t *out, const char *name);

/* Add the label key="value" (value escaped). */
void apex_metrics_label(apex_metrics_sample_t *s, const char *key, const char *value);

/* End the sample with its value (an integer or a real number). */
void apex_metrics_sample_end(apex_metrics_sample_t *s, uint64_t value);
void apex_metrics_sample_end_real(apex_metrics_sample_t *s, double value);

/* A sample with at most one label (key NULL: none), in one call. */
void apex_metrics_sample(apex_ctl_buf_t *out, const char *name, const char *key, const char *value,
			 uint64_t number);

#endif
