/* SPDX-License-Identifier: MIT */
/*
 * DOC: topo.h - topology generators.
 *
 * A spec names a generator and its parameters:
 *   fattree2:leaves=L,spines=S,hosts=H   two-level leaf/spine (folded Clos):
 *                                        H hosts per leaf, every leaf linked
 *                                        once to every spine. The paper's
 *                                        fabric is leaves=32,spines=32,hosts=32.
 *   fattree3:k=K                         k-ary three-level fat tree (k pods of
 *                                        k/2 edge + k/2 aggregation switches,
 *                                        (k/2)^2 cores, k^3/4 hosts).
 * Both accept rate=R (e.g. 100G), latency=T (e.g. 300ns) and mtu=N.
 *
 * Nodes are named H<i> (hosts), L<i>/S<i> (fattree2 leaves, spines) and
 * E<i>/A<i>/C<i> (fattree3 edge, aggregation, core); switches are created
 * first, so in fattree2 the switch index of L<i> is i and of S<j> is L+j.
 */
#ifndef TOPO_H
#define TOPO_H

#include <stddef.h>

struct emu_fabric;

/*
 * emu_topo_from_spec - build and finalize the fabric @spec describes.
 * Return it, or NULL with a one-line reason in @err.
 */
struct emu_fabric *emu_topo_from_spec(const char *spec, char *err, size_t errlen);

/* emu_topo_is_spec - does @s look like a generator spec (rather than a file)? */
int emu_topo_is_spec(const char *s);

/*
 * emu_topo_from_file - read a topology file (format in topologies/README.md):
 *   # comment
 *   defaults rate=100G latency=300ns mtu=1500
 *   switch NAME [level=N]
 *   host NAME
 *   link A[:PORT] B[:PORT] [rate=R] [latency=T] [mtu=N] [loss=P]
 * Errors come back as "FILE:LINE: what is wrong".
 */
struct emu_fabric *emu_topo_from_file(const char *path, char *err, size_t errlen);

/*
 * emu_topo_load - a generator spec or a file, whichever @s is, that an
 * allreduce can run on: a fabric with fewer than two hosts is refused
 * ("FILE: the fabric has 1 host; ...").
 */
struct emu_fabric *emu_topo_load(const char *s, char *err, size_t errlen);

#endif /* TOPO_H */
