// SPDX-License-Identifier: MIT
// journal: the structured journald fields of one log record, built without libsystemd.
#pragma once

#include <stddef.h>

/* Fields of one record: MESSAGE=, PRIORITY=, SYSLOG_IDENTIFIER=, MCPD_SERVER=, MCPD_EVENT=. */
#define JOURNAL_MAX_FIELDS 5

typedef struct JournalFields {
    char *field[JOURNAL_MAX_FIELDS];
    size_t n;
} JournalFields;

/**
 * Build the fields of one record. server and event may be NULL (their fields are left out);
 * field values never contain a newline (journald's simple form would split them).
 */
void journal_fields_build(JournalFields *f, int priority, const char *server, const char *event,
                          const char *message);
/** Release the strings. */
void journal_fields_deinit(JournalFields *f);
