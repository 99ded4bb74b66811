# Every variable of a default (--export=ALL) batch environment, not only SLURM_*: what the
# job inherits from the submitting shell and what Slurm adds (TMPDIR, HOSTNAME, ...).
script job.sh <<'S'
#!/bin/bash
env > env.txt
S
submit job.sh
wait_done "$J"
show_env env.txt '[A-Za-z_][A-Za-z0-9_]*'
