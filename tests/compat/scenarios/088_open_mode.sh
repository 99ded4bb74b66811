# --open-mode=append keeps what an output file held; the default truncates it.
echo "old line" >app.out
echo "old line" >trunc.out
run sbatch -o app.out --open-mode=append --wrap 'echo new line'
wait_done "$J"
run sbatch -o trunc.out --wrap 'echo new line'
wait_done "$J"
show_outputs
