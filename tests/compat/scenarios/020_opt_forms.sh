# The same options in their forms: -J x, -Jx, --job-name=x, --job-name x; -t 5, -t5,
# --time=5, --time 5; -n 2 / --ntasks=2; -N 1 / --nodes 1; -p / --partition.
run sbatch -J a --wrap true
A=$J
run sbatch -Jb -t5 -n 2 --wrap true
B=$J
run sbatch --job-name=c --time=7 --ntasks=2 --nodes=1 --partition=debug --wrap true
C=$J
run sbatch --job-name d --time 8 --ntasks 1 --nodes 1 --partition short --wrap true
D=$J
for j in "$A" "$B" "$C" "$D"; do wait_done "$j"; done
for j in "$A" "$B" "$C" "$D"; do fields "$j" JobName TimeLimit NumNodes NumTasks Partition JobState; done
