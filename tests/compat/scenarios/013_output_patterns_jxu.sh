# Output file name patterns %j (job id), %x (job name), %u (user name).
script job.sh <<'S'
#!/bin/bash
echo "job $SLURM_JOB_NAME"
S
submit -J pat -o 'o-%j-%x-%u.txt' -e 'e-%x.%j' job.sh
wait_done "$J"
fields "$J" StdOut StdErr
show_outputs
