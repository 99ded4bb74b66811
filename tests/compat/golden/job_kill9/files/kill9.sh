#!/bin/bash
echo before
kill -9 $$
echo after
