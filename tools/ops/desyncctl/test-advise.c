// SPDX-License-Identifier: GPL-2.0
/*
 * test-advise.c	"desyncctl advise" on a made-up host
 *
 * Usage: test-advise HOST [--json] [DEV...]
 * Judges the two samples of HOST/qdiscs (test-fixture.h) and of the
 * host's TCP counters in HOST/0/proc/net/{netstat,snmp} and
 * HOST/1/proc/net/{netstat,snmp}, 10 seconds apart.  Exits with
 * advise's status.
 */
#include <stdlib.h>
#include <string.h>

#include "test-fixture.h"

int main(int argc, char **argv)
{
	struct dsq_list s[2] = {};
	struct dsq_tree tree = {};
	struct dsq_tcp t[2];
	char p[4096];
	bool json = false;
	int samples, ret, k;

	if (argc < 2)
		return 3;
	if (argc > 2 && !strcmp(argv[2], "--json")) {
		json = true;
		memmove(&argv[2], &argv[3], (argc - 2) * sizeof(*argv));
		argc--;
	}
	snprintf(p, sizeof(p), "%s/qdiscs", argv[1]);
	samples = fixture_qdiscs(p, argv + 2, argc - 2, &tree, s);
	for (k = 0; k < 2; k++) {
		snprintf(p, sizeof(p), "%s/%d", argv[1], k);
		if (dsq_tcp_read(p, &t[k])) {
			fprintf(stderr, "test-advise: no %s/proc/net/netstat\n", p);
			return 3;
		}
	}
	ret = dsq_advise(&(struct dsq_advise_in){
		.devs = argv + 2, .ndev = argc - 2,
		.before = &s[0], .after = samples > 1 ? &s[1] : &s[0],
		.tcp_before = &t[0], .tcp_after = &t[1],
		.interval = 10 }, stdout, json);
	free(tree.v);
	free(s[0].v);
	free(s[1].v);
	return ret;
}
