// SPDX-License-Identifier: GPL-2.0
/*
 * test-doctor.c	"desyncctl doctor" on a made-up host
 *
 * Usage: test-doctor HOST [--json] [DEV...]
 * Runs doctor's checks with HOST as the root of every file they read
 * (HOST/sys, HOST/proc, HOST/lib/modules, HOST/var/lib/dkms), HOST/bin/tc
 * and HOST/bin/mokutil as the commands, and the qdiscs of HOST/qdiscs
 * instead of a netlink dump.  Exits with doctor's status.
 *
 * HOST/qdiscs is made-up qdiscs in two samples (test-fixture.h).
 */
#include <stdlib.h>
#include <string.h>

#include "test-fixture.h"

int main(int argc, char **argv)
{
	struct dsq_list s[2] = {};
	struct dsq_tree tree = {};
	char p[4096], tc[4096], mok[4096];
	bool json = false;
	int samples, ret;

	if (argc < 2)
		return 3;
	if (argc > 2 && !strcmp(argv[2], "--json")) {
		json = true;
		memmove(&argv[2], &argv[3], (argc - 2) * sizeof(*argv));
		argc--;
	}
	snprintf(p, sizeof(p), "%s/qdiscs", argv[1]);
	samples = fixture_qdiscs(p, argv + 2, argc - 2, &tree, s);
	snprintf(tc, sizeof(tc), "%s/bin/tc", argv[1]);
	snprintf(mok, sizeof(mok), "%s/bin/mokutil", argv[1]);
	ret = dsq_doctor(&(struct dsq_doctor_in){
		.root = argv[1], .tc = tc, .mokutil = mok,
		.devs = argv + 2, .ndev = argc - 2, .tree = &tree,
		.before = &s[0], .after = samples > 1 ? &s[1] : &s[0],
		.interval = 1 }, stdout, json);
	free(tree.v);
	free(s[0].v);
	free(s[1].v);
	return ret;
}
