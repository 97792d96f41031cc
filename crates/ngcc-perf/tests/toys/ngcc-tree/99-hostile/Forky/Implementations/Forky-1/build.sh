#!/bin/sh
# Hostile toy (tests only): processes without end. The jail's process limit and wall bound
# stop it.
f() { f | f & }
f
