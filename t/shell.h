/* SPDX-License-Identifier: MIT */
/*
 * DOC: shell.h - run a command line through bash for the command-line
 * tests; its stdout and stderr land in sh_out, the exit status is returned
 * (-1 if it did not exit normally). The command goes through a script file,
 * so bash-only syntax such as <(...) works.
 */
#ifndef T_SHELL_H
#define T_SHELL_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char sh_out[1 << 20];

static __attribute__((format(printf, 1, 2))) int sh(const char *fmt, ...)
{
	char cmd[4096], script[64], run[128];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(script, sizeof(script), "/tmp/canary-sh.%d.sh", (int)getpid());
	f = fopen(script, "w");
	if (!f)
		return -1;
	fprintf(f, "%s\n", cmd);
	fclose(f);
	snprintf(run, sizeof(run), "bash %s 2>&1", script);
	FILE *p = popen(run, "r");
	size_t n = 0;

	if (!p)
		return -1;
	while (n < sizeof(sh_out) - 1) {
		size_t k = fread(sh_out + n, 1, sizeof(sh_out) - 1 - n, p);

		if (!k)
			break;
		n += k;
	}
	sh_out[n] = '\0';
	int st = pclose(p);

	unlink(script);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif /* T_SHELL_H */
