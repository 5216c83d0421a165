// SPDX-License-Identifier: MIT
// discover-async: discovery on a thread of its own, its result handed back to the loop.

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/config/collect.h"
#include "daemon/config/config-read.h"
#include "daemon/config/config.h"
#include "daemon/config/discover-async.h"

struct DiscoverJob {
    char *config_file, *root;
    Settings settings;
    ConfigSet set;
    pthread_t thread;
    int efd; /* written once by the thread when the set is ready */
    struct event *ev;
    DiscoverDoneFn done;
    void *userdata;
    bool joined;
};

/*
 * The thread touches nothing of the loop's: discovery's shared state is its own (the last good
 * files and ~/.claude.json's reader keep theirs under a lock), and the files it reads are noted
 * in the set (config_discover_off_loop) for the loop to pass on.
 */
static void *run(void *arg)
{
    DiscoverJob *j = arg;
    DiscoverOptions opt = {j->config_file, j->root};
    uint64_t one = 1;

    config_discover_off_loop(&j->set, &opt, &j->settings);
    while (write(j->efd, &one, sizeof(one)) < 0 && errno == EINTR)
        ;
    return NULL;
}

static void job_free(DiscoverJob *j)
{
    if (!j->joined)
        pthread_join(j->thread, NULL);
    config_set_deinit(&j->set);
    if (j->ev)
        event_free(j->ev);
    if (j->efd >= 0)
        close(j->efd);
    free(j->config_file);
    free(j->root);
    free(j);
}

void discover_async_finish(DiscoverJob *j)
{
    ConfigSet set;

    pthread_join(j->thread, NULL);
    j->joined = true;
    /* The watcher learns of the files read here, on the loop. */
    config_set_pass_notes(&j->set);
    set = j->set;
    memset(&j->set, 0, sizeof(j->set));
    j->done(&set, j->userdata);
    job_free(j);
}

static void on_ready(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    discover_async_finish(arg);
}

DiscoverJob *discover_async(struct event_base *base, const DiscoverOptions *opt,
                            const Settings *settings, DiscoverDoneFn done, void *userdata)
{
    DiscoverJob *j = xcalloc(1, sizeof(*j));

    j->config_file = opt->config_file ? xstrdup(opt->config_file) : NULL;
    j->root = opt->root ? xstrdup(opt->root) : NULL;
    j->settings = *settings;
    j->done = done;
    j->userdata = userdata;
    j->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (j->efd < 0 || !(j->ev = event_new(base, j->efd, EV_READ, on_ready, j)) ||
        event_add(j->ev, NULL) < 0 || pthread_create(&j->thread, NULL, run, j) != 0) {
        /* No thread to be had: discovery runs here, as it did before. */
        log_full(LOG_WARNING, NULL, "config", "discovery on a thread: %s; discovering on the loop",
                 strerror(errno));
        ConfigSet set;
        config_discover(&set, opt, settings);
        j->joined = true;
        done(&set, userdata);
        job_free(j);
        return NULL;
    }
    return j;
}

DiscoverJob *discover_async_cancel(DiscoverJob *j)
{
    if (j)
        job_free(j);
    return NULL;
}
