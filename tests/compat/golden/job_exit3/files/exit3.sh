#!/bin/bash
echo before
exit 3
