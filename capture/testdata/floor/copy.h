/*
 * copy_bytes, shared by the C floors (relay.c, forward.c).
 */
#include <errno.h>
#include <unistd.h>

/* copy_bytes copies from the descriptor from to the descriptor to, with
 * blocking read and write calls, until the input ends or a call fails. */
static void copy_bytes(int from, int to)
{
	char buf[64 << 10];
	for (;;) {
		ssize_t n = read(from, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		for (ssize_t off = 0; off < n;) {
			ssize_t m = write(to, buf + off, n - off);
			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0)
				return;
			off += m;
		}
	}
}
