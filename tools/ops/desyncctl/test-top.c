// SPDX-License-Identifier: GPL-2.0
/*
 * test-top.c	a frame of "desyncctl top" on made-up qdiscs
 *
 * Usage: test-top QDISCS
 * Draws the frame of the two samples of QDISCS (test-fixture.h), 10
 * seconds apart, as into a pipe.
 */
#include <stdlib.h>
#include <string.h>

#include "test-fixture.h"

/*
 * top finds a qdisc's last sample by ifindex and handle: number the
 * devices in the order the fixture names them.
 */
static void number_devs(struct dsq_list *l, const struct dsq_tree *tree)
{
	size_t i, j;

	for (i = 0; i < l->n; i++)
		for (j = 0; j < tree->n; j++)
			if (!strcmp(tree->v[j].dev, l->v[i].dev)) {
				l->v[i].ifindex = j + 1;
				break;
			}
}

int main(int argc, char **argv)
{
	struct dsq_list s[2] = {};
	struct dsq_tree tree = {};

	if (argc != 2)
		return 3;
	if (fixture_qdiscs(argv[1], NULL, 0, &tree, s) != 2) {
		fprintf(stderr, "test-top: %s has one sample, a frame needs two\n",
			argv[1]);
		return 3;
	}
	number_devs(&s[0], &tree);
	number_devs(&s[1], &tree);
	dsq_top_frame(stdout, &s[1], &s[0], 10, 1, false);
	free(tree.v);
	free(s[0].v);
	free(s[1].v);
	return 0;
}
