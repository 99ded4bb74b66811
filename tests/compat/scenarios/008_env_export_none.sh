# --export=NONE: which variables the job still sees (names and values of SLURM_* and
# ENVIRONMENT, and whether PATH/HOME/FOO are there).
script job.sh <<'S'
#!/bin/bash
env > env.txt
S
run env FOO=from-submit-env sbatch --export=NONE job.sh
wait_done "$J"
show_env env.txt FOO HOME USER
note "variable names in the job: $(grep -o '^[A-Za-z_][A-Za-z0-9_]*=' env.txt | tr -d = | grep -v -E '^(SLURM|SBATCH_|_$|PWD$|SHLVL$|OLDPWD$)' | LC_ALL=C sort | tr '\n' ' ')"
