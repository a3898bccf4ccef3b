"""The calibrate room: read measured msprof runs (`runs`), fit a chip's timing constants to them (`fit`)."""
