// SPDX-License-Identifier: GPL-2.0
/*
 * doctor.c	"desyncctl doctor": is this host set up for desync?
 *
 * Each check is a function that reads files under in->root (so that the
 * tests can hand it a fixture directory), runs in->tc or in->mokutil
 * where only a command knows, looks at the qdiscs it is given, and adds
 * findings: a severity, one line, and the command that fixes it.  The
 * exit status is a Nagios plugin's (0 OK, 1 WARNING, 2 CRITICAL), which
 * config management and monitoring agents both read.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/pkt_sched.h>

#include "dsq.h"
#include "findings.h"

struct report {
	struct findings	f;
	/* What the version check learnt, for the DKMS check */
	char		plugin_version[64];
	char		release[128];
	bool		loaded;
};

/* --------------------------------------------------------------- helpers */

static void add(struct report *r, enum sev sev, const char *check,
		const char *dev, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void add(struct report *r, enum sev sev, const char *check,
		const char *dev, const char *fix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	findings_vadd(&r->f, sev, check, dev, fix, fmt, ap);
	va_end(ap);
}

/* @rel (an absolute path on the host) under in->root */
static void path(const struct dsq_doctor_in *in, char *buf, size_t len,
		 const char *rel)
{
	snprintf(buf, len, "%s%s", in->root, rel);
}

static bool exists(const struct dsq_doctor_in *in, const char *rel)
{
	char p[PATH_MAX];

	path(in, p, sizeof(p), rel);
	return access(p, F_OK) == 0;
}

/* The first line of @rel without its newline; false if unreadable. */
static bool read_line(const struct dsq_doctor_in *in, const char *rel,
		      char *buf, size_t len)
{
	char p[PATH_MAX];
	FILE *f;
	bool ok;

	path(in, p, sizeof(p), rel);
	f = fopen(p, "r");
	if (!f)
		return false;
	ok = fgets(buf, len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/*
 * Runs @argv with stdin from /dev/null, its stdout and stderr together
 * into @out; returns its exit status, 127 when it could not be run.
 */
static int run_cmd(char *const *argv, char *out, size_t len)
{
	size_t got = 0;
	int fd[2], st;
	ssize_t n;
	pid_t pid;

	out[0] = '\0';
	if (pipe2(fd, O_CLOEXEC))
		return 127;
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return 127;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDONLY);

		if (null < 0 || dup2(null, 0) < 0 || dup2(fd[1], 1) < 0 ||
		    dup2(fd[1], 2) < 0)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	/* Read to the end, keeping what fits: the child must not block. */
	for (;;) {
		char skip[512];

		if (got + 1 < len)
			n = read(fd[0], out + got, len - 1 - got);
		else
			n = read(fd[0], skip, sizeof(skip));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (got + 1 < len)
			got += n;
	}
	out[got] = '\0';
	close(fd[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 127;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 127;
}

static bool dev_wanted(const struct dsq_doctor_in *in, const char *dev)
{
	int k;

	if (!in->ndev)
		return true;
	for (k = 0; k < in->ndev; k++)
		if (!strcmp(in->devs[k], dev))
			return true;
	return false;
}

/* ---------------------------------------------------------------- version */

/*
 * The module says its version in sysfs (MODULE_VERSION); the plugin only
 * to "tc qdisc add ... desync help", which stops at the plugin's option
 * parser, before tc asks the kernel anything.  Both come from
 * sch_desync/version.sh, so a difference means one was upgraded and the
 * other not: the loaded module is the old one until it is reloaded.
 */
static void check_version(const struct dsq_doctor_in *in, struct report *r)
{
	char *argv[] = { (char *)in->tc, "qdisc", "add", "dev", "lo", "root",
			 "desync", "help", NULL };
	char out[4096], mod[64] = "";
	const char *p;
	int rc;

	r->loaded = exists(in, "/sys/module/sch_desync");
	if (r->loaded && !read_line(in, "/sys/module/sch_desync/version",
				    mod, sizeof(mod)))
		snprintf(mod, sizeof(mod), "unknown");

	rc = run_cmd(argv, out, sizeof(out));
	p = strstr(out, "q_desync.so version ");
	if (p) {
		sscanf(p + strlen("q_desync.so version "), "%63s",
		       r->plugin_version);
	} else if (rc == 127 && !strstr(out, "Unknown qdisc")) {
		add(r, SEV_FAIL, "version", NULL, "apt install iproute2",
		    "cannot run %s", in->tc);
		return;
	} else {
		add(r, SEV_FAIL, "version", NULL, "apt install tc-desync",
		    "%s finds no q_desync.so that says its version (in its lib directory or TC_LIB_DIR)",
		    in->tc);
		return;
	}

	if (!r->loaded)
		add(r, SEV_WARN, "version", NULL, "modprobe sch_desync",
		    "sch_desync is not loaded; tc's q_desync.so is %s",
		    r->plugin_version);
	else if (strcmp(mod, r->plugin_version))
		add(r, SEV_FAIL, "version", NULL,
		    "modprobe -r sch_desync && modprobe sch_desync  # once its qdiscs are removed (desync-apply --remove DEV), or reboot",
		    "loaded sch_desync is %s, tc's q_desync.so %s: each may misread the other's options and counters",
		    mod, r->plugin_version);
	else
		add(r, SEV_OK, "version", NULL, NULL,
		    "loaded sch_desync and tc's q_desync.so are both %s", mod);
}

/* --------------------------------------------------------------- lockdown */

#define EFI_SECURE_BOOT	"/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
#define DKMS_MOK	"/var/lib/dkms/mok.pub"

/* "none", "integrity" or "confidentiality": the word in brackets */
static void lockdown_mode(const struct dsq_doctor_in *in, char *buf, size_t len)
{
	char line[128], *b, *e;

	snprintf(buf, len, "none");
	if (!read_line(in, "/sys/kernel/security/lockdown", line, sizeof(line)))
		return;
	b = strchr(line, '[');
	e = b ? strchr(b, ']') : NULL;
	if (b && e)
		snprintf(buf, len, "%.*s", (int)(e - b - 1), b + 1);
}

/* The EFI variable: four bytes of attributes, then 1 when enabled. */
static bool secure_boot(const struct dsq_doctor_in *in)
{
	unsigned char v[5];
	char p[PATH_MAX];
	FILE *f;
	bool on;

	path(in, p, sizeof(p), EFI_SECURE_BOOT);
	f = fopen(p, "rb");
	if (!f)
		return false;
	on = fread(v, 1, sizeof(v), f) == sizeof(v) && v[4] == 1;
	fclose(f);
	return on;
}

/*
 * Under lockdown or Secure Boot, the kernel loads only modules signed by
 * a key it trusts; DKMS signs with /var/lib/dkms/mok.pub, which counts
 * once enrolled as a Machine Owner Key.  A module that is loaded passed
 * already; one that is not needs the key.
 */
static void check_lockdown(const struct dsq_doctor_in *in, struct report *r)
{
	static const char fix[] =
		"mokutil --import /var/lib/dkms/mok.pub  # then reboot and enroll it";
	char mode[32], key[PATH_MAX], out[1024];
	char *argv[] = { (char *)in->mokutil, "--test-key", key, NULL };
	bool sb = secure_boot(in);
	int rc;

	lockdown_mode(in, mode, sizeof(mode));
	if (!strcmp(mode, "none") && !sb) {
		add(r, SEV_OK, "lockdown", NULL, NULL,
		    "lockdown none, Secure Boot off: unsigned modules load");
		return;
	}
	if (r->loaded) {
		add(r, SEV_OK, "lockdown", NULL, NULL,
		    "lockdown %s, Secure Boot %s: sch_desync is loaded, so signed by a trusted key",
		    mode, sb ? "on" : "off");
		return;
	}
	if (!exists(in, DKMS_MOK)) {
		add(r, SEV_FAIL, "lockdown", NULL,
		    "dkms autoinstall && mokutil --import /var/lib/dkms/mok.pub  # then reboot and enroll it",
		    "lockdown %s, Secure Boot %s: sch_desync loads only signed, and DKMS has no signing key (%s)",
		    mode, sb ? "on" : "off", DKMS_MOK);
		return;
	}
	path(in, key, sizeof(key), DKMS_MOK);
	rc = run_cmd(argv, out, sizeof(out));
	if (strstr(out, "already enrolled"))
		add(r, SEV_OK, "lockdown", NULL, NULL,
		    "lockdown %s, Secure Boot %s: DKMS's key is enrolled",
		    mode, sb ? "on" : "off");
	else if (strstr(out, "not enrolled"))
		add(r, SEV_FAIL, "lockdown", NULL, fix,
		    "lockdown %s, Secure Boot %s: DKMS's key %s is not enrolled, sch_desync will not load",
		    mode, sb ? "on" : "off", DKMS_MOK);
	else
		add(r, SEV_WARN, "lockdown", NULL, "apt install mokutil",
		    "lockdown %s, Secure Boot %s: cannot tell whether DKMS's key is enrolled (%s: %s)",
		    mode, sb ? "on" : "off", in->mokutil,
		    rc == 127 ? "not found" : "no answer");
}

/* -------------------------------------------------------------------- dkms */

static int name_cmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* MODULE_VERSION of an uncompressed .ko: "version=" in .modinfo */
static bool ko_version(const char *file, char *buf, size_t len)
{
	static const char key[] = "\0version=";
	char *data = NULL, *p;
	bool ok = false;
	size_t n = 0;
	FILE *f;
	long sz;

	f = fopen(file, "rb");
	if (!f)
		return false;
	if (!fseek(f, 0, SEEK_END) && (sz = ftell(f)) > 0 &&
	    !fseek(f, 0, SEEK_SET) && (data = malloc(sz + 1)))
		n = fread(data, 1, sz, f);
	fclose(f);
	if (n) {
		data[n] = '\0';
		p = memmem(data, n, key, sizeof(key) - 1);
		if (p) {
			snprintf(buf, len, "%s", p + sizeof(key) - 1);
			ok = true;
		}
	}
	free(data);
	return ok;
}

/*
 * Where DKMS installs sch_desync for kernel @k (DEST_MODULE_LOCATION),
 * where make install puts it, or in the tree: the path under in->root,
 * or false.
 */
static bool find_ko(const struct dsq_doctor_in *in, const char *k,
		    char *buf, size_t len)
{
	static const char *const dirs[] = { "updates/dkms", "updates", "extra",
					    "kernel/net/sched" };
	static const char *const exts[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };
	char rel[PATH_MAX];
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(dirs); i++)
		for (j = 0; j < ARRAY_SIZE(exts); j++) {
			snprintf(rel, sizeof(rel), "/lib/modules/%s/%s/sch_desync%s",
				 k, dirs[i], exts[j]);
			if (exists(in, rel)) {
				path(in, buf, len, rel);
				return true;
			}
		}
	return false;
}

/*
 * What "dkms status" reports, read from where it installs: every kernel
 * in /lib/modules (one with a kernel/ directory, not the leftovers of a
 * removed one) from 6.1 on has sch_desync, of the plugin's version.  A
 * module built by hand is found as well.  The running kernel missing it
 * fails; another kernel missing it warns, as it fails at its next boot.
 */
static void check_dkms_kernel(const struct dsq_doctor_in *in,
			      struct report *r, const char *k)
{
	char rel[PATH_MAX], ko[PATH_MAX], ver[64], fix[256];
	bool running = !strcmp(k, r->release);
	int maj = 0, min = 0;

	if (sscanf(k, "%d.%d", &maj, &min) == 2 && (maj < 6 || (maj == 6 && min < 1))) {
		add(r, SEV_OK, "dkms", NULL, NULL,
		    "%s: before 6.1, which sch_desync does not build for", k);
		return;
	}
	if (!find_ko(in, k, ko, sizeof(ko))) {
		snprintf(rel, sizeof(rel), "/lib/modules/%s/build", k);
		if (exists(in, rel))
			snprintf(fix, sizeof(fix), "dkms autoinstall -k %s", k);
		else
			snprintf(fix, sizeof(fix),
				 "apt install linux-headers-%s && dkms autoinstall -k %s",
				 k, k);
		add(r, running ? SEV_FAIL : SEV_WARN, "dkms", NULL, fix,
		    "%s%s: no sch_desync module built%s", k,
		    running ? " (running)" : "",
		    exists(in, rel) ? "" : ", no headers to build it");
		return;
	}
	snprintf(fix, sizeof(fix), "dkms autoinstall -k %s", k);
	if (r->plugin_version[0] && ko_version(ko, ver, sizeof(ver)) &&
	    strcmp(ver, r->plugin_version))
		add(r, SEV_WARN, "dkms", NULL, fix,
		    "%s: sch_desync %s built, tc's q_desync.so is %s", k, ver,
		    r->plugin_version);
	else
		add(r, SEV_OK, "dkms", NULL, NULL, "%s%s: sch_desync built", k,
		    running ? " (running)" : "");
}

static void check_dkms(const struct dsq_doctor_in *in, struct report *r)
{
	char p[PATH_MAX], rel[PATH_MAX];
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;

	path(in, p, sizeof(p), "/lib/modules");
	d = opendir(p);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "/lib/modules/%s/kernel", de->d_name);
		if (!exists(in, rel))
			continue;
		if (n == cap) {
			char **v = realloc(names, (cap = cap ? 2 * cap : 8) * sizeof(*v));

			if (!v)
				break;
			names = v;
		}
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	if (d)
		closedir(d);
	if (!n)
		add(r, SEV_WARN, "dkms", NULL, NULL,
		    "no kernel installed in /lib/modules");
	qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		check_dkms_kernel(in, r, names[i]);
		free(names[i]);
	}
	free(names);
}

/* -------------------------------------------------------------- TX queues */

static int tx_queues(const struct dsq_doctor_in *in, const char *dev)
{
	char p[PATH_MAX], rel[PATH_MAX];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(rel, sizeof(rel), "/sys/class/net/%s/queues", dev);
	path(in, p, sizeof(p), rel);
	d = opendir(p);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, "tx-", 3);
	closedir(d);
	return n;
}

static const struct dsq_qdisc *find_child(const struct dsq_tree *t,
					  const char *dev, uint32_t parent)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i].parent == parent && !strcmp(t->v[i].dev, dev))
			return &t->v[i];
	return NULL;
}

/*
 * mq (and mqprio and taprio, which keep one child per TX queue as well)
 * gives each queue its own qdisc and lock; a desync at the root of a
 * multiqueue device takes one lock for all of them.
 */
static void check_txq_dev(const struct dsq_doctor_in *in, struct report *r,
			  const char *dev)
{
	const struct dsq_tree *t = in->tree;
	const struct dsq_qdisc *root, *c;
	char fix[256], other[160] = "", h[16];
	int nq = tx_queues(in, dev), k, have = 0, shown = 0;
	bool any = false;
	size_t i, o = 0;

	if (nq < 0) {
		add(r, SEV_FAIL, "txq", dev, NULL, "no device %s", dev);
		return;
	}
	snprintf(fix, sizeof(fix), "desync-apply %s", dev);
	root = find_child(t, dev, TC_H_ROOT);
	for (i = 0; i < t->n; i++)
		any |= !strcmp(t->v[i].dev, dev) && !strcmp(t->v[i].kind, "desync");

	if (root && !strcmp(root->kind, "desync")) {
		if (nq > 1) {
			snprintf(fix, sizeof(fix),
				 "desync-apply %s  # one desync per TX queue under mq (DESYNC_MQ=auto)",
				 dev);
			add(r, SEV_WARN, "txq", dev, fix,
			    "%s: one desync at the root of %d TX queues: every packet takes its one lock",
			    dev, nq);
		} else {
			add(r, SEV_OK, "txq", dev, NULL,
			    "%s: desync at the root of its one TX queue", dev);
		}
		return;
	}
	if (root && (!strcmp(root->kind, "mq") || !strcmp(root->kind, "mqprio") ||
		     !strcmp(root->kind, "taprio"))) {
		for (k = 1; k <= nq; k++) {
			c = find_child(t, dev, TC_H_MAKE(root->handle, k));
			if (c && !strcmp(c->kind, "desync")) {
				have++;
				continue;
			}
			if (shown++ < 3 && o < sizeof(other)) {
				dsq_fmt_tc_parent(h, sizeof(h), TC_H_MAKE(root->handle, k));
				o += snprintf(other + o, sizeof(other) - o, "%s%s %s",
					      o ? ", " : "", h, c ? c->kind : "none");
			}
		}
		if (have == nq) {
			add(r, SEV_OK, "txq", dev, NULL,
			    "%s: desync on each of its %d TX queues (%s)", dev,
			    nq, root->kind);
			return;
		}
		/* desync-apply leaves an mqprio or taprio root alone. */
		if (strcmp(root->kind, "mq")) {
			dsq_fmt_handle(h, sizeof(h), root->handle);
			snprintf(fix, sizeof(fix),
				 "tc qdisc replace dev %s parent %sN desync  # for each TX queue N",
				 dev, h);
		}
		add(r, SEV_FAIL, "txq", dev, fix,
		    "%s: desync on %d of %d TX queues under %s (%s%s)", dev,
		    have, nq, root->kind, other, shown > 3 ? ", ..." : "");
		return;
	}
	if (any) {
		add(r, SEV_OK, "txq", dev, NULL,
		    "%s: desync under a %s root, not one per TX queue", dev,
		    root ? root->kind : "missing");
		return;
	}
	add(r, SEV_FAIL, "txq", dev, fix, "%s: no desync qdisc (root %s)", dev,
	    root ? root->kind : "none");
}

static void check_txq(const struct dsq_doctor_in *in, struct report *r)
{
	const struct dsq_tree *t = in->tree;
	size_t i, j;
	int k;

	for (k = 0; k < in->ndev; k++)
		check_txq_dev(in, r, in->devs[k]);
	if (in->ndev)
		return;
	/* Without DEV, every device that has a desync qdisc, once. */
	for (i = 0; i < t->n; i++) {
		if (strcmp(t->v[i].kind, "desync"))
			continue;
		for (j = 0; j < i; j++)
			if (!strcmp(t->v[j].kind, "desync") &&
			    !strcmp(t->v[j].dev, t->v[i].dev))
				break;
		if (j == i)
			check_txq_dev(in, r, t->v[i].dev);
	}
	if (!in->after->n)
		add(r, SEV_WARN, "txq", NULL, "desync-apply DEV",
		    "no desync qdisc on any device");
}

/* -------------------------------------------------------------------- ECN */

static bool has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	const char *p;

	for (p = list; (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

/*
 * desync marks CE at a step (ce_threshold, ce_backlog), as DCTCP's
 * switches do: DCTCP reads the fraction of marks, while Reno or CUBIC
 * halve their window at each marked round trip, and a connection that
 * did not negotiate ECN sends packets that cannot be marked at all.
 * Linux negotiates ECN for a DCTCP socket whatever tcp_ecn says, on both
 * ends (tcp_ecn_send_syn(), tcp_ecn_create_request()); for the others
 * only with tcp_ecn 1 (or 2 on the passive side).
 */
static void check_ecn(const struct dsq_doctor_in *in, struct report *r)
{
	char ecn[16] = "", cc[64] = "", avail[512] = "", rel[PATH_MAX];
	const struct dsq_list *l = in->after;
	bool marking = false, dctcp;
	const char *fix;
	size_t i;

	for (i = 0; i < l->n; i++)
		marking |= l->v[i].opt[TCA_DESYNC_CE_THRESHOLD] ||
			   l->v[i].opt[TCA_DESYNC_CE_BACKLOG];
	read_line(in, "/proc/sys/net/ipv4/tcp_ecn", ecn, sizeof(ecn));
	read_line(in, "/proc/sys/net/ipv4/tcp_congestion_control", cc, sizeof(cc));
	read_line(in, "/proc/sys/net/ipv4/tcp_available_congestion_control",
		  avail, sizeof(avail));
	snprintf(rel, sizeof(rel), "/lib/modules/%s/kernel/net/ipv4", r->release);
	dctcp = has_word(avail, "dctcp");
	if (!dctcp) {
		char p[PATH_MAX];
		size_t len = strlen(rel);

		for (i = 0; i < 4 && !dctcp; i++) {
			snprintf(p, sizeof(p), "%.*s/tcp_dctcp%s", (int)len, rel,
				 (const char *[]){ ".ko", ".ko.xz", ".ko.zst", ".ko.gz" }[i]);
			dctcp = exists(in, p);
		}
	}
	fix = "modprobe tcp_dctcp && sysctl -w net.ipv4.tcp_congestion_control=dctcp";

	if (!l->n) {
		add(r, SEV_OK, "ecn", NULL, NULL,
		    "no desync qdisc marks CE (tcp_ecn %s, %s)", ecn, cc);
	} else if (!marking) {
		add(r, SEV_OK, "ecn", NULL, NULL,
		    "desync's ECN marking is off (ce_threshold 0, ce_backlog 0): tcp_ecn %s, %s not needed",
		    ecn, cc);
	} else if (!strcmp(cc, "dctcp")) {
		add(r, SEV_OK, "ecn", NULL, NULL,
		    "dctcp by default: desync's CE marks are read as DCTCP's");
	} else if (!strcmp(ecn, "0")) {
		add(r, SEV_FAIL, "ecn", NULL, fix,
		    "tcp_ecn 0 and %s: no connection is ECN-capable, desync's ce_threshold and ce_backlog mark nothing%s",
		    cc, dctcp ? "" : " (and this kernel has no tcp_dctcp)");
	} else {
		add(r, SEV_WARN, "ecn", NULL, fix,
		    "%s by default (tcp_ecn %s): it halves its window at each CE mark desync sets at DCTCP's step%s",
		    cc, ecn, dctcp ? "" : " (and this kernel has no tcp_dctcp)");
	}
}

/* ------------------------------------------------------------------ stats */

/*
 * The mean hold of a held burst of @d, in ns, 0 without a hold:
 * hold_time / held_bursts.  With any arm but always only armed groups
 * hold, and dividing by every burst start would hide their holds.  A
 * module older than held_bursts counts held packets, not held bursts:
 * then, with any arm but always, this is the least the mean can be
 * (dsq_held_bursts_max()), which is enough to tell a widened window,
 * and *@exact is false; with arm always, hold_time / bursts.
 */
static uint64_t mean_hold(const struct dsq *d, bool *exact)
{
	uint64_t n;

	*exact = true;
	if (!d->has_xs)
		return 0;
	n = dsq_held_bursts(d, NULL, exact);
	if (dsq_holds_every_burst(d))
		*exact = true;
	return n ? d->xs.hold_time / n : 0;
}

/*
 * On each desync qdisc: a mean hold (mean_hold()) above half of
 * offset_max says that groups widened their window after timeouts
 * (Documentation/tuning.md, widen); early_release growing between the two
 * samples says hold_limit ends holds before their time; drops growing
 * say limit is reached.
 */
static void check_stats(const struct dsq_doctor_in *in, struct report *r)
{
	const struct dsq_list *l = in->after;
	size_t i, j;

	for (i = 0; i < l->n; i++) {
		const char *dev = l->v[i].dev;
		int nq = 0, hold = 0, er = 0, drops = 0;
		const struct dsq *armed = NULL;
		bool all_exact = true;
		char arm[32];

		for (j = 0; j < i; j++)
			if (!strcmp(l->v[j].dev, dev))
				break;
		if (j < i)
			continue;
		if (!dev_wanted(in, dev))
			continue;
		/* Every desync qdisc of this device */
		for (j = i; j < l->n; j++) {
			const struct dsq *d = &l->v[j], *b = dsq_list_find(in->before, d);
			uint64_t om = d->opt[TCA_DESYNC_OFFSET_MAX];
			char p[16], fix[256];
			uint64_t mean;
			bool exact;

			if (strcmp(d->dev, dev))
				continue;
			mean = mean_hold(d, &exact);
			all_exact &= exact;
			nq++;
			if (!armed && !dsq_holds_every_burst(d))
				armed = d;
			dsq_fmt_tc_parent(p, sizeof(p), d->parent);
			if (om && dsq_random_offsets(d) && mean > om * 1000 / 2) {
				snprintf(fix, sizeof(fix),
					 "tc qdisc change dev %s parent %s desync widen 0  # where the timeouts are not collisions (tracepoint desync:desync_burst)",
					 dev, p);
				add(r, SEV_WARN, "hold", dev, fix,
				    "%s parent %s: mean hold %s%" PRIu64 "us above half of offset_max %" PRIu64 "us: groups widened after timeouts",
				    dev, p,
				    dsq_holds_every_burst(d) ? "" :
				    exact ? "of a held burst " : "of a held burst at least ",
				    mean / 1000, om);
				hold++;
			}
			if (!b)
				continue;
			if (d->has_xs && b->has_xs && d->xs.early_release > b->xs.early_release) {
				snprintf(fix, sizeof(fix),
					 "tc qdisc change dev %s parent %s desync hold_limit %" PRIu64,
					 dev, p, 2 * d->opt[TCA_DESYNC_HOLD_LIMIT]);
				add(r, SEV_WARN, "early_release", dev, fix,
				    "%s parent %s: early_release grew by %llu in %gs: hold_limit %" PRIu64 "p ends holds before their time",
				    dev, p,
				    (unsigned long long)(d->xs.early_release - b->xs.early_release),
				    in->interval, d->opt[TCA_DESYNC_HOLD_LIMIT]);
				er++;
			}
			if (d->st.drops > b->st.drops) {
				snprintf(fix, sizeof(fix),
					 "tc qdisc change dev %s parent %s desync limit %" PRIu64,
					 dev, p, 2 * d->opt[TCA_DESYNC_LIMIT]);
				add(r, SEV_WARN, "drops", dev, fix,
				    "%s parent %s: %" PRIu64 " drops in %gs (drop_overlimit %llu): limit %" PRIu64 "p reached",
				    dev, p, d->st.drops - b->st.drops, in->interval,
				    (unsigned long long)(d->xs.drop_overlimit -
							 (b->has_xs ? b->xs.drop_overlimit : 0)),
				    d->opt[TCA_DESYNC_LIMIT]);
				drops++;
			}
		}
		if (!hold && armed)
			add(r, SEV_OK, "hold", dev, NULL,
			    "%s: no window seen widened on %d desync qdisc%s (arm %s: hold_time over %s, within half of offset_max)",
			    dev, nq, nq == 1 ? "" : "s",
			    dsq_fmt_arm(armed->opt[TCA_DESYNC_ARM], arm, sizeof(arm)),
			    all_exact ? "held_bursts, the mean hold of a held burst" :
			    "min(held, bursts), the least mean hold of a held burst");
		else if (!hold)
			add(r, SEV_OK, "hold", dev, NULL,
			    "%s: mean hold within half of offset_max on %d desync qdisc%s",
			    dev, nq, nq == 1 ? "" : "s");
		if (!er)
			add(r, SEV_OK, "early_release", dev, NULL,
			    "%s: no early_release in %gs", dev, in->interval);
		if (!drops)
			add(r, SEV_OK, "drops", dev, NULL, "%s: no drops in %gs",
			    dev, in->interval);
	}
}

int dsq_doctor(const struct dsq_doctor_in *in, FILE *f, bool json)
{
	struct report r = {};
	enum sev worst;

	if (!read_line(in, "/proc/sys/kernel/osrelease", r.release, sizeof(r.release)))
		r.release[0] = '\0';
	check_version(in, &r);
	check_lockdown(in, &r);
	check_dkms(in, &r);
	check_txq(in, &r);
	check_ecn(in, &r);
	check_stats(in, &r);

	worst = findings_worst(&r.f);
	if (json)
		findings_print_json(f, &r.f);
	else
		findings_print_text(f, &r.f);
	findings_free(&r.f);
	return worst;
}
