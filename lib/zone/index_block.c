/* SPDX-License-Identifier: BSD-3-Clause */
/* A derived version's name index in a block its chain keeps (see
 * index_block.h). */
#include "zone/index_block.h"

#include <pthread.h>
#include <stdlib.h>

#include "util/huge_map.h"
#include "util/populate.h"

/* A new block for an index of size bytes, with a sixteenth more room, so
 * that the derivations after it, a few names larger, still fit; its size
 * in *block_size. */
static void *new_block(size_t size, size_t *block_size)
{
	*block_size = size + size / 16;
	return apex_huge_block_alloc(block_size);
}

void *apex_index_block_take(apex_index_mem_t *mem, const apex_zone_t *zone, size_t size)
{
	apex_zone_t *root = apex_zone_chain_root(zone);
	void *block = NULL, *unfit = NULL;
	size_t block_size = 0, unfit_size = 0;

	pthread_mutex_lock(&root->spare_lock);
	if (root->spare_index != NULL) {
		if (root->spare_index_size >= size && root->spare_index_size / 2 <= size) {
			block = root->spare_index;
			block_size = root->spare_index_size;
		} else {
			unfit = root->spare_index; /* the zone grew, or shrank by half */
			unfit_size = root->spare_index_size;
		}
		root->spare_index = NULL;
		root->spare_index_size = 0;
	}
	pthread_mutex_unlock(&root->spare_lock);
	apex_huge_block_free(unfit, unfit_size);
	if (block == NULL && (block = new_block(size, &block_size)) == NULL)
		return NULL;
	mem->block = block;
	mem->block_size = block_size;
	mem->keeper = root;
	return block;
}

void apex_index_block_prepare(const apex_zone_t *zone)
{
	apex_zone_t *root = apex_zone_chain_root(zone);
	const apex_zone_t *base = zone->base;

	if (base == NULL || atomic_load_explicit(&zone->index_mem, memory_order_acquire) ==
				    atomic_load_explicit(&base->index_mem, memory_order_acquire))
		return;
	pthread_mutex_lock(&root->spare_lock);
	bool kept = root->spare_index != NULL;
	pthread_mutex_unlock(&root->spare_lock);
	if (kept)
		return;
	/* as apex_index_block_take() makes one for zone's names */
	size_t block_size;
	void *block = new_block(apex_index_prefix_bytes(zone->node_count) +
					apex_index_order_bytes(zone->node_count),
				&block_size);
	if (block == NULL)
		return;
	apex_populate_for_write(block, block_size);
	apex_zone_keep_index_block(root, block, block_size);
}

void apex_index_block_drop(const apex_zone_t *zone)
{
	apex_zone_t *root = apex_zone_chain_root(zone);

	pthread_mutex_lock(&root->spare_lock);
	void *block = root->spare_index;
	size_t block_size = root->spare_index_size;
	root->spare_index = NULL;
	root->spare_index_size = 0;
	pthread_mutex_unlock(&root->spare_lock);
	apex_huge_block_free(block, block_size);
}

size_t apex_index_block_kept(const apex_zone_t *zone)
{
	apex_zone_t *root = apex_zone_chain_root(zone);

	pthread_mutex_lock(&root->spare_lock);
	size_t size = root->spare_index_size;
	pthread_mutex_unlock(&root->spare_lock);
	return size;
}
