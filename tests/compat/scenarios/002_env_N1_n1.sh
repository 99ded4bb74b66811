# The batch environment of -N1 -n1: which SLURM_* variables exist and their values.
script job.sh <<'S'
#!/bin/bash
env > env.txt
S
submit -N1 -n1 job.sh
wait_done "$J"
show_env env.txt
