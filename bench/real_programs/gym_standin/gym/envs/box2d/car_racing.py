"""CarRacing's module constants; the environment itself needs Box2D."""

STATE_W, STATE_H = 96, 96


class CarRacing:
    def __init__(self, *args, **kwargs):
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled("Box2D is not installed (gym stand-in)")
