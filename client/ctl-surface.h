// SPDX-License-Identifier: MIT
// ctl-surface: mcpctl prompts, resources, read and prompt: the rest of what servers offer.
#pragma once

#include "client/ctl.h"

/** prompts: every prompt of every server. */
int ctl_verb_prompts(Ctl *ctl, char **args, int n);
/** resources: every resource and resource template. */
int ctl_verb_resources(Ctl *ctl, char **args, int n);
/** read URI: one resources/read. */
int ctl_verb_read(Ctl *ctl, char **args, int n);
/** prompt NAME [JSON]: one prompts/get. */
int ctl_verb_prompt(Ctl *ctl, char **args, int n);
