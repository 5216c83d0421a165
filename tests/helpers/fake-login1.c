// SPDX-License-Identifier: MIT
// fake-login1: logind's stand-in on a private bus ($DBUS_SYSTEM_BUS_ADDRESS): owns the name
// org.freedesktop.login1 and emits org.freedesktop.login1.Manager.PrepareForSleep(true) on
// SIGUSR1 and PrepareForSleep(false) (a resume) on SIGUSR2; exits on SIGTERM. Writes "ready" to
// the file named by its argument once the name is its own.

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <systemd/sd-bus.h>

int main(int argc, char **argv)
{
    sd_bus *bus = NULL;
    sigset_t set;
    FILE *f;
    int r, sig;

    if (argc != 2) {
        fprintf(stderr, "usage: fake-login1 READY-FILE\n");
        return 2;
    }
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    r = sd_bus_open_system(&bus);
    if (r >= 0)
        r = sd_bus_request_name(bus, "org.freedesktop.login1", 0);
    if (r < 0) {
        fprintf(stderr, "fake-login1: %s\n", strerror(-r));
        return 1;
    }
    if (!(f = fopen(argv[1], "w")) || fputs("ready\n", f) < 0 || fclose(f) != 0)
        return 1;
    while (sigwait(&set, &sig) == 0 && sig != SIGTERM) {
        r = sd_bus_emit_signal(bus, "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                               "PrepareForSleep", "b", sig == SIGUSR1);
        if (r >= 0)
            r = sd_bus_flush(bus);
        if (r < 0)
            fprintf(stderr, "fake-login1: emitting PrepareForSleep: %s\n", strerror(-r));
        else
            fprintf(stderr, "fake-login1: PrepareForSleep(%s)\n",
                    sig == SIGUSR1 ? "true" : "false");
    }
    sd_bus_flush_close_unref(bus);
    return 0;
}
