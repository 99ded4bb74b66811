# --export=FOO,BAR=baz (only those plus SLURM_*) and --export=ALL,BAR=baz.
script job.sh <<'S'
#!/bin/bash
env > "env-$SLURM_JOB_NAME.txt"
S
run env FOO=foo-value QUX=qux-value sbatch -J list --export=FOO,BAR=baz job.sh
wait_done "$J"
show_env env-list.txt FOO BAR QUX HOME
run env FOO=foo-value QUX=qux-value sbatch -J all --export=ALL,BAR=baz job.sh
wait_done "$J"
show_env env-all.txt FOO BAR QUX HOME
