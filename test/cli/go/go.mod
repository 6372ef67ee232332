module shimkit.test/release

go 1.19
