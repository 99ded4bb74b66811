#!/bin/bash
there_is_no_such_command
