/* runtime/net/tap.c — tap devices for microVM pods (/dev/net/tun). */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <unistd.h>

#include "net/internal.h"
#include "util/cleanup.h"

/* Errors that mean "the host cannot give us another tap" (fd table, file
 * table, kernel memory) rather than a bug or a missing permission: the
 * density benchmark stops on these and reports the limit. */
static bool is_limit(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOMEM || e == ENOBUFS || e == ENOSPC;
}

static int tap_fail(qp_error **err, int e, const char *what, const char *name)
{
	if (is_limit(e)) {
		qp_error_set(err, QP_E_TAPLIMIT, e, "tap device limit reached");
		return qp_error_prefix(err, "%s \"%s\"", what, name);
	}
	return qp_fail(err, e, "%s \"%s\"", what, name);
}

int qp_tap_open(const char *name, bool vnet_hdr, qp_error **err)
{
	_cleanup_close_ int fd = -1;
	struct ifreq ifr;

	if (qp_net_validate_ifname(name, err) < 0)
		return -1;
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return tap_fail(err, errno, "open /dev/net/tun for tap", name);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | (vnet_hdr ? IFF_VNET_HDR : 0);
	/* Not TUNSETPERSIST: the device dies with the last fd, i.e. the VMM. */
	if (ioctl(fd, TUNSETIFF, &ifr) < 0)
		return tap_fail(err, errno, "create tap", name);
	if (strncmp(ifr.ifr_name, name, sizeof(ifr.ifr_name)))
		return qp_error_set(err, QP_E_GENERIC, 0, "create tap \"%s\": kernel named it \"%s\"",
				    name, ifr.ifr_name);
	/* never 0..2: the VMM's stdio would take its number */
	if (fd < 3) {
		int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (high < 0)
			return tap_fail(err, errno, "dup the fd of tap", name);
		close(fd);
		fd = high;
	}
	return steal_fd(&fd);
}

int qp_net_tap_unattached(const char *name, qp_error **err)
{
	unsigned char r[4];
	char random_name[IFNAMSIZ];

	if (name)
		return qp_tap_open(name, true, err);
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return qp_fail(err, errno, "getrandom");
	snprintf(random_name, sizeof(random_name), "qpt-%02x%02x%02x%02x", r[0], r[1], r[2], r[3]);
	return qp_tap_open(random_name, true, err);
}
