#!/bin/bash
echo start
sleep 120
echo never
