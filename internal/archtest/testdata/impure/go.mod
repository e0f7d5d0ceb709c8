module example.com/impure

go 1.22
