#!/bin/bash
echo "line 1 to stdout"
echo "line 2 to stderr" >&2
echo "line 3 to stdout"
