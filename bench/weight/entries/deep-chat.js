// Page entry: deep-chat's web component (`<deep-chat>`), registered by importing the package, as its docs show.
import 'deep-chat';
