# -D DIR: the job runs in DIR, relative -o names are relative to DIR, SLURM_SUBMIT_DIR stays
# the submit directory.
mkdir sub
script job.sh <<'S'
#!/bin/bash
pwd
echo "submit dir $SLURM_SUBMIT_DIR"
S
submit -D sub -o rel.out job.sh
A=$J
submit --chdir="$PWD/sub" job.sh
B=$J
wait_done "$A"
wait_done "$B"
fields "$A" WorkDir StdOut
fields "$B" WorkDir StdOut
show_outputs
