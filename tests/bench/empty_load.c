// SPDX-License-Identifier: GPL-2.0-only
/*
 * empty_load - for make bench only: load and attach the do-nothing
 * programs of empty.bpf.o (bpftool before 7.2 cannot attach tp_btf),
 * keep them attached until SIGTERM or SIGINT, then detach and exit.
 * usage: empty_load OBJECT
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	(void)sig;
	done = 1;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: empty_load OBJECT\n");
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "empty_load: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "empty_load: load %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
		/* the links live as long as the process: never destroyed
		 * before exit, which detaches them */
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "empty_load: attach %s: %s\n",
				bpf_program__name(prog), strerror(errno));
			return 1;
		}
	}
	while (!done)
		pause();
	bpf_object__close(obj);
	return 0;
}
