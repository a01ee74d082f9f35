#include <string.h>

#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/writer.h"
#include "util/error.h"

/* Compression pointers hold 14-bit offsets. */
#define POINTER_LIMIT 0x4000u

void apex_writer_init(apex_writer_t *w, uint8_t *buf, size_t limit, size_t capacity)
{
	w->buf = buf;
	w->capacity = capacity;
	w->limit = limit < capacity ? limit : capacity;
	w->pos = APEX_HEADER_SIZE;
	memset(w->counts, 0, sizeof(w->counts));
	w->compress_count = 0;
}

static void remember(apex_writer_t *w, const uint8_t *name, size_t offset)
{
	if (offset >= POINTER_LIMIT || w->compress_count >= APEX_COMPRESS_MAX)
		return;
	apex_compress_entry_t *e = &w->compress[w->compress_count++];
	e->name = name;
	e->offset = (uint16_t)offset;
	e->size = (uint8_t)apex_name_size(name);
}

/* Offset of an earlier occurrence of the whole name `suffix`, or -1. */
static int find_suffix(const apex_writer_t *w, const uint8_t *suffix, size_t size)
{
	for (unsigned i = 0; i < w->compress_count; i++) {
		const apex_compress_entry_t *e = &w->compress[i];
		if (e->size == size && apex_name_equal(e->name, suffix))
			return e->offset;
	}
	return -1;
}

/*
 * Write name at w->pos, bounded by end.  With compress, the longest
 * suffix already in the message becomes a pointer, and the labels
 * written out become compression targets.  Returns 0 or APEX_ESPACE.
 */
static int write_name(apex_writer_t *w, const uint8_t *name, bool compress, size_t end)
{
	size_t size = apex_name_size(name);
	size_t prefix = size;  /* bytes written as labels */
	int pointer = -1;
	if (compress) {
		size_t off = 0;
		while (name[off] != 0) {
			pointer = find_suffix(w, name + off, size - off);
			if (pointer >= 0)
				break;
			off += 1 + (size_t)name[off];
		}
		if (pointer >= 0)
			prefix = off;
	}
	size_t need = prefix + (pointer >= 0 ? 2 : 0);
	if (w->pos + need > end)
		return APEX_ESPACE;
	memcpy(w->buf + w->pos, name, prefix);
	if (compress) {
		for (size_t off = 0; off < prefix && name[off] != 0; off += 1 + (size_t)name[off])
			remember(w, name + off, w->pos + off);
	}
	w->pos += prefix;
	if (pointer >= 0) {
		apex_write_u16(w->buf + w->pos, (uint16_t)(0xC000u | (unsigned)pointer));
		w->pos += 2;
	}
	return APEX_OK;
}

int apex_writer_question(apex_writer_t *w, const uint8_t *qname, uint16_t qtype, uint16_t qclass)
{
	size_t size = apex_name_size(qname);
	if (w->pos + size + 4 > w->limit)
		return APEX_ESPACE;
	/* Copy the bytes as received, then let later names point at them. */
	int ret = write_name(w, qname, true, w->limit);
	if (ret != APEX_OK)
		return ret;
	apex_write_u16(w->buf + w->pos, qtype);
	apex_write_u16(w->buf + w->pos + 2, qclass);
	w->pos += 4;
	w->counts[APEX_SECTION_QUESTION]++;
	return APEX_OK;
}

/*
 * RDATA of one record with its names compressed (types whose RDATA
 * names RFC 1035 allows to compress).  rdata is the uncompressed form
 * of size rdlen, which is valid wire data from the zone.
 */
static int write_rdata_compressed(apex_writer_t *w, uint16_t type, const uint8_t *rdata,
				  size_t rdlen)
{
	size_t off = 0;
	switch (type) {
	case APEX_TYPE_MX:
		if (w->pos + 2 > w->limit)
			return APEX_ESPACE;
		memcpy(w->buf + w->pos, rdata, 2);
		w->pos += 2;
		off = 2;
		/* fall through */
	case APEX_TYPE_NS:
	case APEX_TYPE_CNAME:
	case APEX_TYPE_PTR: {
		int ret = write_name(w, rdata + off, true, w->limit);
		if (ret != APEX_OK)
			return ret;
		off += apex_name_size(rdata + off);
		break;
	}
	case APEX_TYPE_SOA:
		for (int i = 0; i < 2; i++) {
			int ret = write_name(w, rdata + off, true, w->limit);
			if (ret != APEX_OK)
				return ret;
			off += apex_name_size(rdata + off);
		}
		break;
	default:
		break;
	}
	/* Whatever follows the names (SOA counters) is copied as is. */
	if (off < rdlen) {
		if (w->pos + (rdlen - off) > w->limit)
			return APEX_ESPACE;
		memcpy(w->buf + w->pos, rdata + off, rdlen - off);
		w->pos += rdlen - off;
	}
	return APEX_OK;
}

static bool compressible(uint16_t type)
{
	return type == APEX_TYPE_NS || type == APEX_TYPE_CNAME || type == APEX_TYPE_SOA ||
	       type == APEX_TYPE_MX || type == APEX_TYPE_PTR;
}

int apex_writer_rrset(apex_writer_t *w, int section, const uint8_t *owner,
		      const apex_rrset_t *rrset, uint32_t ttl)
{
	apex_writer_mark_t mark;
	apex_writer_mark(w, &mark);
	const uint8_t *p = rrset->rdata;
	bool compress = compressible(rrset->type);
	for (unsigned i = 0; i < rrset->count; i++) {
		uint16_t rdlen = apex_read_u16(p);
		const uint8_t *rdata = p + 2;
		p += 2 + rdlen;
		if (write_name(w, owner, true, w->limit) != APEX_OK)
			goto nospace;
		if (w->pos + 10 > w->limit)
			goto nospace;
		uint8_t *fixed = w->buf + w->pos;
		apex_write_u16(fixed, rrset->type);
		apex_write_u16(fixed + 2, 1);  /* IN */
		apex_write_u32(fixed + 4, ttl);
		w->pos += 10;
		size_t start = w->pos;
		if (compress) {
			if (write_rdata_compressed(w, rrset->type, rdata, rdlen) != APEX_OK)
				goto nospace;
		} else {
			if (w->pos + rdlen > w->limit)
				goto nospace;
			memcpy(w->buf + w->pos, rdata, rdlen);
			w->pos += rdlen;
		}
		apex_write_u16(fixed + 8, (uint16_t)(w->pos - start));
		w->counts[section]++;
	}
	return APEX_OK;
nospace:
	apex_writer_rollback(w, &mark);
	return APEX_ESPACE;
}

int apex_writer_rr(apex_writer_t *w, int section, const uint8_t *owner, uint16_t type,
		   uint16_t rclass, uint32_t ttl, const uint8_t *rdata, size_t rdata_size)
{
	apex_writer_mark_t mark;
	apex_writer_mark(w, &mark);
	if (rdata_size > 0xFFFF || write_name(w, owner, true, w->limit) != APEX_OK ||
	    w->pos + 10 + rdata_size > w->limit) {
		apex_writer_rollback(w, &mark);
		return APEX_ESPACE;
	}
	uint8_t *p = w->buf + w->pos;
	apex_write_u16(p, type);
	apex_write_u16(p + 2, rclass);
	apex_write_u32(p + 4, ttl);
	apex_write_u16(p + 8, (uint16_t)rdata_size);
	memcpy(p + 10, rdata, rdata_size);
	w->pos += 10 + rdata_size;
	w->counts[section]++;
	return APEX_OK;
}

int apex_writer_opt(apex_writer_t *w, uint16_t payload, uint8_t ext_rcode, bool dnssec_ok,
		    const uint8_t *nsid, uint16_t nsid_size)
{
	size_t size = apex_writer_opt_size(nsid, nsid_size);
	if (w->pos + size > w->capacity)
		return APEX_ESPACE;
	uint8_t *p = w->buf + w->pos;
	p[0] = 0;  /* root owner */
	apex_write_u16(p + 1, APEX_TYPE_OPT);
	apex_write_u16(p + 3, payload);
	/* TTL: extended rcode, version 0, DO, Z */
	p[5] = ext_rcode;
	p[6] = 0;
	apex_write_u16(p + 7, dnssec_ok ? 0x8000u : 0);
	apex_write_u16(p + 9, (uint16_t)(size - 11));
	if (nsid != NULL) {
		apex_write_u16(p + 11, 3);  /* NSID */
		apex_write_u16(p + 13, nsid_size);
		memcpy(p + 15, nsid, nsid_size);
	}
	w->pos += size;
	w->counts[APEX_SECTION_ADDITIONAL]++;
	return APEX_OK;
}

size_t apex_writer_finish(apex_writer_t *w, uint16_t id, uint16_t flags)
{
	uint8_t *h = w->buf;
	apex_write_u16(h + APEX_HDR_ID, id);
	apex_write_u16(h + APEX_HDR_FLAGS, flags);
	apex_write_u16(h + APEX_HDR_QDCOUNT, w->counts[APEX_SECTION_QUESTION]);
	apex_write_u16(h + APEX_HDR_ANCOUNT, w->counts[APEX_SECTION_ANSWER]);
	apex_write_u16(h + APEX_HDR_NSCOUNT, w->counts[APEX_SECTION_AUTHORITY]);
	apex_write_u16(h + APEX_HDR_ARCOUNT, w->counts[APEX_SECTION_ADDITIONAL]);
	return w->pos;
}
