// SPDX-License-Identifier: GPL-2.0
/*
 * desyncctl	inspect desync qdiscs: show, top, export, doctor, advise
 *
 * Reads only: every request is a dump or a get, so it runs as any user
 * (netlink dumps need no privilege) and cannot disturb the qdiscs it
 * watches.  Configuration stays with tc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <netlink/version.h>

#include "dsq.h"

#ifndef DESYNCCTL_VERSION
#define DESYNCCTL_VERSION	"unknown"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: desyncctl show [DEV...] [--json]\n"
		"       desyncctl top [DEV...] [--interval SECONDS] [--count N]\n"
		"       desyncctl export [DEV...|--all] [--output FILE]\n"
		"       desyncctl doctor [DEV...] [--interval SECONDS] [--json]\n"
		"       desyncctl advise [DEV...] [--interval SECONDS] [--json]\n"
		"       desyncctl --version | --help\n"
		"Without DEV, every device's desync qdiscs.\n");
}

/*
 * node_exporter may read the file at any moment: write a temporary file
 * in the same directory (so rename() stays on one file system, and with
 * a name its *.prom glob skips), then rename it over the old one.
 */
static int export_file(const char *path, const struct dsq_list *l)
{
	char *copy = strdup(path), *tmp = NULL;
	int fd = -1, err = -1;
	FILE *f = NULL;

	if (!copy || asprintf(&tmp, "%s/.%s.XXXXXX", dirname(copy),
			      basename((char *)path)) < 0) {
		tmp = NULL;
		goto out;
	}
	fd = mkstemp(tmp);
	if (fd < 0)
		goto out;
	/* Readable by node_exporter, which runs as its own user */
	if (fchmod(fd, 0644))
		goto out;
	f = fdopen(fd, "w");
	if (!f)
		goto out;
	fd = -1;
	dsq_print_prom(f, l);
	if (fflush(f) || ferror(f) || fsync(fileno(f)))
		goto out;
	if (fclose(f)) {
		f = NULL;
		goto out;
	}
	f = NULL;
	if (rename(tmp, path))
		goto out;
	err = 0;
out:
	if (err)
		fprintf(stderr, "desyncctl: cannot write %s: %s\n", path,
			strerror(errno));
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	if (err && tmp)
		unlink(tmp);
	free(tmp);
	free(copy);
	return err;
}

enum { OPT_JSON = 1, OPT_ALL, OPT_INTERVAL, OPT_COUNT, OPT_OUTPUT,
	OPT_VERSION, OPT_HELP };

static const struct option long_opts[] = {
	{ "json",	no_argument,		NULL, OPT_JSON },
	{ "all",	no_argument,		NULL, OPT_ALL },
	{ "interval",	required_argument,	NULL, OPT_INTERVAL },
	{ "count",	required_argument,	NULL, OPT_COUNT },
	{ "output",	required_argument,	NULL, OPT_OUTPUT },
	{ "version",	no_argument,		NULL, OPT_VERSION },
	{ "help",	no_argument,		NULL, OPT_HELP },
	{ }
};

struct args {
	const char	*cmd;
	bool		json;
	double		interval;
	long		count;
	const char	*output;
	char		**devs;
	int		ndev;
};

/* 0 to run, 1 when done already (help, version), 2 on a usage error */
static int parse_args(int argc, char **argv, struct args *a)
{
	char *end;
	int c;

	a->interval = 1.0;
	while ((c = getopt_long(argc, argv, "jh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'j':
		case OPT_JSON:
			a->json = true;
			break;
		case OPT_ALL:
			/* The default without DEV; named for the exporter's unit */
			break;
		case OPT_INTERVAL:
			a->interval = strtod(optarg, &end);
			if (*end || !(a->interval >= 0.01 && a->interval <= 3600)) {
				fprintf(stderr, "desyncctl: --interval wants seconds in [0.01, 3600]\n");
				return 2;
			}
			break;
		case OPT_COUNT:
			a->count = strtol(optarg, &end, 10);
			if (*end || a->count < 1) {
				fprintf(stderr, "desyncctl: --count wants a positive number\n");
				return 2;
			}
			break;
		case OPT_OUTPUT:
			a->output = optarg;
			break;
		case OPT_VERSION:
			printf("desyncctl utility, sch_desync-%s, %s\n",
			       DESYNCCTL_VERSION, LIBNL_STRING);
			return 1;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	a->cmd = argv[optind++];
	a->devs = argv + optind;
	a->ndev = argc - optind;
	if (a->output && strcmp(a->cmd, "export")) {
		fprintf(stderr, "desyncctl: --output is for export\n");
		return 2;
	}
	return 0;
}

/* Exit statuses of doctor and advise, a Nagios plugin's */
#define DOCTOR_UNKNOWN	3

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Two samples of the desync qdiscs @a->interval apart, for the counters
 * that must not grow, and one dump of every qdisc, for where desync
 * sits.  A named device that does not exist is doctor's finding, not
 * an error of the command.
 */
static int doctor(struct nl_sock *sk, const struct args *a)
{
	struct dsq_list before = {}, after = {};
	struct dsq_tree tree = {};
	const char *tc = getenv("TC"), *mokutil = getenv("MOKUTIL");
	struct dsq_doctor_in in = {
		.root		= "",
		.tc		= tc && *tc ? tc : "tc",
		.mokutil	= mokutil && *mokutil ? mokutil : "mokutil",
		.devs		= a->devs,
		.ndev		= a->ndev,
		.tree		= &tree,
		.before		= &before,
		.after		= &after,
		.interval	= a->interval,
	};
	int err, ret = DOCTOR_UNKNOWN;

	err = dsq_collect(sk, a->devs, a->ndev, &before);
	if (err && err != -ENODEV)
		goto out;
	sleep_s(a->interval);
	err = dsq_collect(sk, a->devs, a->ndev, &after);
	if (err && err != -ENODEV)
		goto out;
	if (dsq_collect_tree(sk, &tree))
		goto out;
	ret = dsq_doctor(&in, stdout, a->json);
	if (fflush(stdout))
		ret = DOCTOR_UNKNOWN;
out:
	dsq_tree_free(&tree);
	dsq_list_free(&after);
	dsq_list_free(&before);
	return ret;
}

/*
 * The host's TCP counters and the desync qdiscs, twice, @a->interval
 * apart; each pair read back to back, so that both sides of a verdict
 * cover the same time.
 */
static int advise(struct nl_sock *sk, const struct args *a)
{
	struct dsq_list before = {}, after = {};
	struct dsq_tcp tb, ta;
	struct dsq_advise_in in = {
		.devs		= a->devs,
		.ndev		= a->ndev,
		.before		= &before,
		.after		= &after,
		.tcp_before	= &tb,
		.tcp_after	= &ta,
		.interval	= a->interval,
	};
	int err, ret = DOCTOR_UNKNOWN;

	err = dsq_collect(sk, a->devs, a->ndev, &before);
	if (err && err != -ENODEV)
		goto out;
	err = dsq_tcp_read("", &tb);
	if (err) {
		fprintf(stderr, "desyncctl: cannot read /proc/net/netstat: %s\n",
			strerror(-err));
		goto out;
	}
	sleep_s(a->interval);
	err = dsq_collect(sk, a->devs, a->ndev, &after);
	if (err && err != -ENODEV)
		goto out;
	if (dsq_tcp_read("", &ta))
		goto out;
	ret = dsq_advise(&in, stdout, a->json);
	if (fflush(stdout))
		ret = DOCTOR_UNKNOWN;
out:
	dsq_list_free(&after);
	dsq_list_free(&before);
	return ret;
}

static int run(struct nl_sock *sk, const struct args *a)
{
	struct dsq_list l;
	int err;

	if (!strcmp(a->cmd, "doctor"))
		return doctor(sk, a);
	if (!strcmp(a->cmd, "advise"))
		return advise(sk, a);
	if (!strcmp(a->cmd, "top"))
		return dsq_top(sk, a->devs, a->ndev, a->interval, a->count) ? 1 : 0;
	if (strcmp(a->cmd, "show") && strcmp(a->cmd, "export")) {
		fprintf(stderr, "desyncctl: unknown command \"%s\"\n", a->cmd);
		usage(stderr);
		return 2;
	}

	/*
	 * A named device that is gone fails the command, but what the
	 * others have is still written: a timer's export of several
	 * devices must not keep serving the old values of all of them.
	 */
	err = dsq_collect(sk, a->devs, a->ndev, &l);
	if (err && err != -ENODEV) {
		dsq_list_free(&l);
		return 1;
	}
	if (!strcmp(a->cmd, "export")) {
		/* No desync qdisc is a valid, empty export, not an error */
		if (!a->output)
			dsq_print_prom(stdout, &l);
		else if (export_file(a->output, &l))
			err = 1;
	} else if (a->json) {
		dsq_print_json(stdout, &l);
	} else {
		dsq_print_text(stdout, &l);
	}
	if (!strcmp(a->cmd, "show") && !l.n) {
		fprintf(stderr, "desyncctl: no desync qdisc found\n");
		err = 1;
	}
	dsq_list_free(&l);
	if (fflush(stdout))
		err = 1;
	return err ? 1 : 0;
}

/*
 * doctor's and advise's own failures, a usage error included, exit 3
 * (UNKNOWN): their 1 and 2 are findings.
 */
static bool is_doctor(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "doctor") || !strcmp(argv[i], "advise"))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct args a = {};
	struct nl_sock *sk;
	int ret;

	ret = parse_args(argc, argv, &a);
	if (ret)
		return ret == 1 ? 0 : is_doctor(argc, argv) ? DOCTOR_UNKNOWN : 2;
	sk = dsq_open();
	if (!sk)
		return !strcmp(a.cmd, "doctor") || !strcmp(a.cmd, "advise") ?
		       DOCTOR_UNKNOWN : 1;
	ret = run(sk, &a);
	dsq_close(sk);
	return ret;
}
