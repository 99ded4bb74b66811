# --mem and --mem-per-cpu in the environment (SLURM_MEM_PER_NODE / SLURM_MEM_PER_CPU) and in
# scontrol (MinMemoryNode / MinMemoryCPU, TRES), with unit suffixes; a fractional size is
# refused.
script job.sh <<'S'
#!/bin/bash
env > "env-$SLURM_JOB_NAME.txt"
S
submit --mem=200 -J mem200 job.sh
wait_done "$J"
show_env env-mem200.txt
fields "$J" MinMemoryNode MinMemoryCPU TRES
submit --mem 300M -J mem300M job.sh
wait_done "$J"
fields "$J" MinMemoryNode MinMemoryCPU TRES
submit --mem-per-cpu=100M -n2 -J mpc job.sh
wait_done "$J"
show_env env-mpc.txt
fields "$J" MinMemoryNode MinMemoryCPU TRES
submit --mem 0.25G -J memfrac job.sh
