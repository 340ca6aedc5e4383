/*
 * The C floor of BenchmarkHTTPProxyThroughput: a minimal TCP relay, the
 * least a process between an HTTP client and its server can cost.
 *
 *	relay LISTEN-PORT UPSTREAM-PORT
 *
 * Every connection accepted on 127.0.0.1:LISTEN-PORT is relayed byte for
 * byte to a connection of its own to 127.0.0.1:UPSTREAM-PORT and back,
 * each way on a thread of its own with blocking read and write calls: no
 * poller, no scheduler of its own, nothing looked at. The benchmark builds
 * it with the system's C compiler when there is one.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "copy.h"

static struct sockaddr_in upstream;

/* One direction of a relayed connection. */
struct way {
	int from, to;
};

/* copy_way copies one direction, then ends the output. */
static void *copy_way(void *arg)
{
	struct way *w = arg;
	copy_bytes(w->from, w->to);
	shutdown(w->to, SHUT_WR);
	return NULL;
}

/* relay serves the accepted connection c: the client-to-upstream way on a
 * thread of its own, the way back on this one. */
static void *relay(void *arg)
{
	int c = (int)(long)arg, one = 1;
	int u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (u < 0 || connect(u, (struct sockaddr *)&upstream, sizeof upstream) < 0) {
		close(c);
		if (u >= 0)
			close(u);
		return NULL;
	}
	/* as Go's net package and the recording proxy set them */
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct way in = {c, u}, out = {u, c};
	pthread_t t;
	if (pthread_create(&t, NULL, copy_way, &in) == 0) {
		copy_way(&out);
		pthread_join(t, NULL);
	}
	close(c);
	close(u);
	return NULL;
}

/* loopback returns the address 127.0.0.1:port, port given as text. */
static struct sockaddr_in loopback(const char *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(port))};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: relay LISTEN-PORT UPSTREAM-PORT\n");
		return 2;
	}
	struct sockaddr_in listen_at = loopback(argv[1]);
	upstream = loopback(argv[2]);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	if (l < 0) {
		perror("relay: socket");
		return 1;
	}
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(l, (struct sockaddr *)&listen_at, sizeof listen_at) < 0 || listen(l, 1024) < 0) {
		perror("relay: listen");
		return 1;
	}
	for (;;) {
		int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("relay: accept");
			return 1;
		}
		pthread_t t;
		if (pthread_create(&t, NULL, relay, (void *)(long)c) != 0) {
			close(c);
			continue;
		}
		pthread_detach(t);
	}
}
