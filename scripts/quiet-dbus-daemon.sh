#!/bin/sh
# dbus-run-session starts this instead of dbus-daemon: the same daemon, its log kept off the terminal.
exec dbus-daemon "$@" 2>/dev/null
