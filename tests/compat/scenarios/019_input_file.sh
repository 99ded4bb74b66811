# -i FILE feeds the batch script's standard input; the default is /dev/null.
file in.txt <<'S'
line one
line two
S
script job.sh <<'S'
#!/bin/bash
cat
echo "eof"
S
submit -i in.txt -o with-input.out job.sh
A=$J
submit -o no-input.out job.sh
B=$J
wait_done "$A"
wait_done "$B"
fields "$A" StdIn
fields "$B" StdIn
show_outputs
