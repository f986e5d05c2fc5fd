// SPDX-License-Identifier: MIT
/*
 * DOC: peers_file.c - the peer table file. See peers_file.h.
 */
#include "libhost/tools/peers_file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* parse_line - one "RANK IPV4 MAC" line into @p[rank]; false if it is not one, or the rank is out of range */
static bool parse_line(const char *line, struct lh_peer *p, unsigned n, unsigned *rank)
{
	unsigned r, ip[4], mac[6];
	char extra;

	if (sscanf(line, "%u %u.%u.%u.%u %x:%x:%x:%x:%x:%x %c", &r, &ip[0], &ip[1], &ip[2], &ip[3], &mac[0], &mac[1],
		   &mac[2], &mac[3], &mac[4], &mac[5], &extra) != 11 || r >= n)
		return false;
	for (int i = 0; i < 6; i++)
		if (mac[i] > 255 || (i < 4 && ip[i] > 255))
			return false;
	p[r].ipv4 = ip[0] << 24 | ip[1] << 16 | ip[2] << 8 | ip[3];
	for (int i = 0; i < 6; i++)
		p[r].mac[i] = (uint8_t)mac[i];
	*rank = r;
	return true;
}

int lh_peers_file_read(const char *path, struct lh_peer *p, unsigned n, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[256];
	unsigned lineno = 0, got = 0, r;
	bool *seen;
	int rc = 0;

	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "'%s': %s", path, strerror(errno));
		return rc;
	}
	seen = calloc(n, sizeof(*seen));
	if (!seen) {
		fclose(f);
		snprintf(err, errlen, "'%s': out of memory", path);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t lead = strspn(line, " \t\r\n");

		lineno++;
		if (!line[lead] || line[lead] == '#')
			continue;
		if (!parse_line(line, p, n, &r) || seen[r]) {	/* (a rank again: an error all the same) */
			snprintf(err, errlen, "%s:%u: not 'RANK IPV4 MAC' with a new rank below %u", path, lineno, n);
			rc = -EINVAL;
			break;
		}
		seen[r] = true;
		got++;
	}
	fclose(f);
	free(seen);
	if (!rc && got != n) {
		snprintf(err, errlen, "%s: %u of the %u ranks listed", path, got, n);
		rc = -EINVAL;
	}
	return rc;
}

uint64_t lh_peers_file_rate(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	unsigned long long bps = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "# rate %llu", &bps) == 1)
			break;
	fclose(f);
	return bps;
}

int lh_peers_file_run(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	unsigned run;
	int r = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "# run %u", &run) == 1) {
			r = run < 4 ? (int)run : -1;
			break;
		}
	fclose(f);
	return r;
}
