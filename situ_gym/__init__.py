"""SituRec Gym: situated recommendation stores as Gymnasium environments."""
