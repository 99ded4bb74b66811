# -W/--wait: sbatch returns when the job ends, with the job's exit code.
run sbatch -W -o w0.out --wrap 'echo fine'
A=$J
run sbatch --wait -o w3.out --wrap 'echo failing; exit 3'
B=$J
fields "$A" JobState ExitCode
fields "$B" JobState ExitCode
show_outputs
