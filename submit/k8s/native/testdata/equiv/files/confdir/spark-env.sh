export X=1
