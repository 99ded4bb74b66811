#!/bin/bash
env | grep -E '^(SLURM|SBATCH)_' | sort
