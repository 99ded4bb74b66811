# -i/--iterate: squeue and sinfo print their report every N seconds, each with the date line
# first (unless -h) and a blank line after it, until SIGINT; bad values are refused. (Run on a
# terminal, as a user would: Slurm's output to a pipe would be lost in its buffer at SIGINT.
# SIGINT after 3 s with -i 2 gives two reports; the date is masked.)
iterate() {
  run sh -c "script -qc '$1' /dev/null </dev/null | tr -d '\r' | sed -E 's/^[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} [0-9]{4}\$/DATE/'"
}
run sbatch -p parked -J parked --wrap true
A=$J
wait_field "$A" Reason PartitionDown
iterate "timeout -s INT 3 sinfo -i 2 -p short"
iterate "timeout -s INT 3 sinfo -h --iterate=2 -p short"
iterate "timeout -s INT 3 sinfo -l -i 2 -p short"
iterate "timeout -s INT 3 squeue -i 2 -p parked"
iterate "timeout -s INT 3 squeue -h -i 2 -p parked -o %i,%T,%r"
iterate "timeout -s INT 3 squeue -l --iterate 2 -p parked"
for v in 0 -1 abc ''; do
  run_literal sinfo -i "$v"
  run_literal squeue --iterate="$v"
done
run scancel "$A"
