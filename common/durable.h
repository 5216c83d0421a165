// SPDX-License-Identifier: MIT
// durable: replace a file so that a crash leaves the old version or the new one, never a mix.
#pragma once

#include <stddef.h>
#include <sys/types.h>

/**
 * Replace path (in directory dir) with len bytes of data durably: a temp file beside it
 * (O_CREAT|O_EXCL, mode 0600, never through a link), write, fsync, rename over path, fsync
 * of dir. Return 0, or -errno with *whyp (when whyp is not NULL) naming the file and the step;
 * on failure path is untouched and no temp file is left.
 */
int durable_write(const char *dir, const char *path, const void *data, size_t len, char **whyp);
/** As durable_write, the new file getting mode (its permission bits) before the rename. */
int durable_write_mode(const char *dir, const char *path, const void *data, size_t len, mode_t mode,
                       char **whyp);
/**
 * Remove path (in directory dir) durably: unlink, then fsync of dir, so a crash cannot bring it
 * back. Return 0, or -errno with *whyp (when not NULL) naming the file and the step.
 */
int durable_remove(const char *dir, const char *path, char **whyp);
