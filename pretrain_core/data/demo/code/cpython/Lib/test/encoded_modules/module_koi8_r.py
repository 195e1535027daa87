# test koi8-r encoding
# -*- encoding: koi8-r  -*-
test = "Познание бесконечности требует бесконечного времени."
