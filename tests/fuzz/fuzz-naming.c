// SPDX-License-Identifier: MIT
// fuzz-naming: libFuzzer target for the tool-name sanitiser and collision handling.

/*
 * The input is a list of "server\ttool" lines. Every exposed name must be at most
 * NAMING_MAX_LEN characters of [a-z0-9_], start with "mcp_", and be unique in the set; the
 * target aborts on any breach, so libFuzzer reports it as a crash.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "daemon/core/naming.h"

/* Enough entries to collide often; more only slows each run down. */
#define FUZZ_MAX_ENTRIES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_name(const char *name)
{
    size_t n = strlen(name);

    if (n > NAMING_MAX_LEN || strncmp(name, "mcp_", 4) != 0)
        abort();
    for (size_t i = 0; i < n; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
              name[i] == '_'))
            abort();
}

/* Split the input into entries; servers and tools point into text. */
static size_t split(char *text, NamingEntry *entries)
{
    size_t n = 0;

    for (char *save = NULL, *ln = strtok_r(text, "\n", &save); ln && n < FUZZ_MAX_ENTRIES;
         ln = strtok_r(NULL, "\n", &save)) {
        char *tab = strchr(ln, '\t');
        if (tab)
            *tab = '\0';
        entries[n++] = (NamingEntry){.server = ln, .tool = tab ? tab + 1 : ""};
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = xstrndup((const char *)data, size);
    NamingEntry entries[FUZZ_MAX_ENTRIES];
    size_t n = split(text, entries);

    for (size_t i = 0; i < n; i++) {
        char *s = naming_sanitize(entries[i].server, "server");
        if (!*s || strlen(s) > strlen(entries[i].server) + strlen("server"))
            abort();
        free(s);
    }
    naming_assign(entries, n);
    for (size_t i = 0; i < n; i++) {
        check_name(entries[i].name);
        /* Sorted by name, so a duplicate would sit next to its twin. */
        if (i > 0 && strcmp(entries[i - 1].name, entries[i].name) >= 0)
            abort();
    }
    for (size_t i = 0; i < n; i++)
        free(entries[i].name);
    free(text);
    return 0;
}
