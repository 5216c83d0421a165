// SPDX-License-Identifier: MIT
// durable: the durable-write recipe, shared with the client (common/durable.c).
#pragma once

#include "common/durable.h"
