module ohseven/gobot

go 1.19
