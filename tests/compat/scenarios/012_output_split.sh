# -o and -e to different files; -e alone (stdout stays in slurm-%j.out); -o alone.
script job.sh <<'S'
#!/bin/bash
echo out-line
echo err-line >&2
S
submit -o both.out -e both.err job.sh
A=$J
submit -e only-err.txt job.sh
B=$J
submit --output=only-out.txt job.sh
C=$J
for j in "$A" "$B" "$C"; do wait_done "$j"; done
fields "$A" StdOut StdErr
fields "$B" StdOut StdErr
fields "$C" StdOut StdErr
show_outputs
