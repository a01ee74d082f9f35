/* SPDX-License-Identifier: BSD-3-Clause */
/* A change set in IXFR order, serialised (see changes.h). */
#include "xfr/changes.h"

#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"

bool apex_changes_soa_serial(const uint8_t *rdata, size_t size, uint32_t *serial)
{
	size_t mname = apex_name_checked_size(rdata, rdata + size);
	if (mname == 0)
		return false;
	size_t rname = apex_name_checked_size(rdata + mname, rdata + size);
	if (rname == 0 || size - mname - rname != 20)
		return false;
	*serial = apex_read_u32(rdata + mname + rname);
	return true;
}

void apex_changes_init(apex_changes_t *c)
{
	memset(c, 0, sizeof(*c));
	c->next = APEX_CHANGE_OLD_SOA;
}

void apex_changes_free(apex_changes_t *c)
{
	free(c->data);
	apex_changes_init(c);
}

bool apex_changes_complete(const apex_changes_t *c)
{
	return c->next == APEX_CHANGE_ADD;
}

/* May a record of this kind and type come next? Records after the old SOA
 * are removals until the new SOA, then additions. */
static bool in_order(const apex_changes_t *c, apex_change_kind_t kind, uint16_t type)
{
	switch (kind) {
	case APEX_CHANGE_OLD_SOA: return c->next == APEX_CHANGE_OLD_SOA && type == APEX_TYPE_SOA;
	case APEX_CHANGE_REMOVE: return c->next == APEX_CHANGE_REMOVE && type != APEX_TYPE_SOA;
	case APEX_CHANGE_NEW_SOA: return c->next == APEX_CHANGE_REMOVE && type == APEX_TYPE_SOA;
	case APEX_CHANGE_ADD: return c->next == APEX_CHANGE_ADD && type != APEX_TYPE_SOA;
	}
	return false;
}

static int reserve(apex_changes_t *c, size_t more)
{
	if (c->capacity - c->size >= more)
		return APEX_OK;
	size_t capacity = c->capacity ? c->capacity : 4096;
	while (capacity - c->size < more)
		capacity *= 2;
	uint8_t *grown = realloc(c->data, capacity);
	if (grown == NULL)
		return APEX_ENOMEM;
	c->data = grown;
	c->capacity = capacity;
	return APEX_OK;
}

int apex_changes_reserve(apex_changes_t *c, size_t bytes)
{
	if (c->capacity - c->size >= bytes)
		return APEX_OK;
	uint8_t *grown = realloc(c->data, c->size + bytes);
	if (grown == NULL)
		return APEX_ENOMEM;
	c->data = grown;
	c->capacity = c->size + bytes;
	return APEX_OK;
}

int apex_changes_append(apex_changes_t *c, apex_change_kind_t kind, const apex_rr_t *rr)
{
	size_t owner = apex_name_checked_size(rr->owner, rr->owner + APEX_NAME_MAX);
	uint32_t serial = 0;

	if (owner == 0 || !in_order(c, kind, rr->type))
		return APEX_EINVAL;
	if (rr->type == APEX_TYPE_SOA && !apex_changes_soa_serial(rr->rdata, rr->rdlength, &serial))
		return APEX_EINVAL;
	int rc = reserve(c, owner + 10u + rr->rdlength);
	if (rc < 0)
		return rc;
	uint8_t *p = c->data + c->size;
	memcpy(p, rr->owner, owner);
	p += owner;
	apex_write_u16(p, rr->type);
	apex_write_u16(p + 2, rr->rclass);
	apex_write_u32(p + 4, rr->ttl);
	apex_write_u16(p + 8, rr->rdlength);
	memcpy(p + 10, rr->rdata, rr->rdlength);
	c->size += owner + 10u + rr->rdlength;

	switch (kind) {
	case APEX_CHANGE_OLD_SOA:
		c->serial_from = serial;
		c->next = APEX_CHANGE_REMOVE;
		break;
	case APEX_CHANGE_REMOVE: c->removed++; break;
	case APEX_CHANGE_NEW_SOA:
		c->serial_to = serial;
		c->next = APEX_CHANGE_ADD;
		break;
	case APEX_CHANGE_ADD: c->added++; break;
	}
	return APEX_OK;
}

void apex_changes_reader_init(apex_changes_reader_t *r, const uint8_t *data, size_t size)
{
	r->data = data;
	r->size = size;
	r->pos = 0;
	r->next = APEX_CHANGE_OLD_SOA;
}

int apex_changes_next(apex_changes_reader_t *r, apex_rr_t *rr, apex_change_kind_t *kind)
{
	const uint8_t *p = r->data + r->pos;
	size_t left = r->size - r->pos;

	if (left == 0)
		return r->next == APEX_CHANGE_ADD ? APEX_ENOENT : APEX_EMALFORMED;
	size_t owner = apex_name_checked_size(p, p + left);
	if (owner == 0 || left - owner < 10)
		return APEX_EMALFORMED;
	apex_changes_record_at(p, owner, rr);
	if (left - owner - 10 < rr->rdlength)
		return APEX_EMALFORMED;

	uint32_t serial;
	bool soa = rr->type == APEX_TYPE_SOA;
	if (soa && !apex_changes_soa_serial(rr->rdata, rr->rdlength, &serial))
		return APEX_EMALFORMED;
	switch (r->next) {
	case APEX_CHANGE_OLD_SOA:
		if (!soa)
			return APEX_EMALFORMED;
		*kind = APEX_CHANGE_OLD_SOA;
		r->next = APEX_CHANGE_REMOVE;
		break;
	case APEX_CHANGE_REMOVE:
	case APEX_CHANGE_NEW_SOA:
		*kind = soa ? APEX_CHANGE_NEW_SOA : APEX_CHANGE_REMOVE;
		if (soa)
			r->next = APEX_CHANGE_ADD;
		break;
	case APEX_CHANGE_ADD:
		if (soa)
			return APEX_EMALFORMED; /* a third SOA: not one change set */
		*kind = APEX_CHANGE_ADD;
		break;
	}
	r->pos += owner + 10u + rr->rdlength;
	return APEX_OK;
}
