/*
 * The C floor of BenchmarkRecordRoundTrip: a minimal stdio forwarder, the
 * least a process between an MCP client and the server it launches can
 * cost.
 *
 *	forward CMD [ARGS...]
 *
 * It starts CMD with its stdin and stdout on pipes and copies its own
 * stdin to the child and the child's stdout to its own stdout, each way
 * on a thread of its own with blocking read and write calls: no poller,
 * no framing, nothing looked at. It exits with the child's status once the
 * child's output ends. The benchmark builds it with the system's C
 * compiler when there is one.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "copy.h"

/* One direction of the forwarder. */
struct way {
	int from, to;
};

/* copy_way copies one direction, then closes the output. */
static void *copy_way(void *arg)
{
	struct way *w = arg;
	copy_bytes(w->from, w->to);
	close(w->to);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: forward CMD [ARGS...]\n");
		return 2;
	}
	int to_child[2], from_child[2];
	if (pipe2(to_child, O_CLOEXEC) < 0 || pipe2(from_child, O_CLOEXEC) < 0) {
		perror("forward: pipe");
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("forward: fork");
		return 1;
	}
	if (pid == 0) { /* the child: its own ends as stdin and stdout */
		if (dup2(to_child[0], 0) < 0 || dup2(from_child[1], 1) < 0)
			_exit(126);
		execvp(argv[1], argv + 1);
		perror("forward: exec");
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);
	struct way in = {0, to_child[1]}, out = {from_child[0], 1};
	pthread_t t;
	if (pthread_create(&t, NULL, copy_way, &in) != 0) {
		perror("forward: thread");
		return 1;
	}
	pthread_detach(t); /* it may wait on stdin after the child is gone */
	copy_way(&out);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
